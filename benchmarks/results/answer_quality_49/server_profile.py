"""Per-call profile from a llama-server log, matched to records by call counts (fresh cache, concurrency 1)."""
import json, re, sys, statistics as st
log, recs = sys.argv[1], sys.argv[2]
pe = re.compile(r"task (\d+) \| prompt eval time =\s+([\d.]+) ms /\s+(\d+) tokens")
ev = re.compile(r"task (\d+) \|        eval time =\s+([\d.]+) ms /\s+(\d+) tokens")
calls = {}
order = []
for line in open(log):
    m = pe.search(line)
    if m:
        t = int(m.group(1)); calls[t] = {"pms": float(m.group(2)), "pn": int(m.group(3))}; order.append(t); continue
    m = ev.search(line)
    if m:
        calls[int(m.group(1))].update(ems=float(m.group(2)), en=int(m.group(3)))
seq = [calls[t] for t in order]
rs = [json.loads(l) for l in open(recs)]
i = 0
per = {}
for r in rs:
    want = r["cost"].get("prompt_tokens_read") or 0
    j, got = i, 0
    while j < len(seq) and got < want:
        got += seq[j]["pn"]; j += 1
    if got != want: print("  misaligned at", r["qid"], want, got)
    qc = seq[i:j]; i = j
    per.setdefault(r["label"], []).append((r, qc))
print("calls in log", len(seq), "matched", i)
for label, L in per.items():
    print("==", label, "n", len(L))
    width = max(len(qc) for _, qc in L)
    for pos in range(width):
        xs = [qc[pos] for _, qc in L if len(qc) > pos]
        print(f"  call {pos+1}: n={len(xs)} read med {st.median(x['pn'] for x in xs):.0f} ({sum(x['pms'] for x in xs)/1000:.0f}s tot) wrote med {st.median(x.get('en',0) for x in xs):.0f} ({sum(x.get('ems',0) for x in xs)/1000:.0f}s tot)")
    lastr = [qc[-1] for _, qc in L if qc]
    print(f"  LAST call: read med {st.median(x['pn'] for x in lastr):.0f} wrote med {st.median(x.get('en',0) for x in lastr):.0f}")
    tot_p = sum(x['pms'] for _, qc in L for x in qc) / 1000; tot_e = sum(x.get('ems', 0) for _, qc in L for x in qc) / 1000
    tot_s = sum(r['cost']['seconds'] for r, _ in L)
    print(f"  totals: reading {tot_p:.0f}s writing {tot_e:.0f}s wall {tot_s:.0f}s; median s/q {st.median(r['cost']['seconds'] for r,_ in L):.1f}")
