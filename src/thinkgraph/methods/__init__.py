"""Question-answering methods over one index. Each owns its prompts and loop; ``catalog`` lists them
(kept free of imports so that the command line's help loads none of them)."""
