from thinkgraph.cli import main

main()
