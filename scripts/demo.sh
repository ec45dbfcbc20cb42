#!/usr/bin/env bash
# Quick start: install, index the shipped sample corpus, ask it a question.
# With THINKGRAPH_LLM_BASE_URL (and THINKGRAPH_LLM_MODEL) set, the answer is synthesised by that LLM;
# without, the retrieved evidence is printed with its provenance.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/env.sh" office   # the office extra: Word, PowerPoint, Excel, EPUB, OpenDocument files
mkdir -p "$ROOT/.thinkgraph"
INDEX="$ROOT/.thinkgraph/demo.db"
thinkgraph --index "$INDEX" index "$ROOT/examples/sample_corpus"
thinkgraph --index "$INDEX" ask "${1:-Who made the lens of the Skarn Lighthouse, and who trained her?}"
