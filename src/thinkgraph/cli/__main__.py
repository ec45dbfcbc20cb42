"""`python -m thinkgraph.cli`: the same as the `thinkgraph` command."""

from thinkgraph.cli import main

main()
