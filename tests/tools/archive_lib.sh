# SPDX-License-Identifier: BSD-3-Clause
#
# archive_lib.sh -- what the archive's shell tests share (sourced after
# cluster_lib.sh): js N PATH..., values of node N's status --json (one line
# per PATH, a.b for a nested key; null for null or absent, booleans as
# true/false); restored ARCHIVE, a restore of the newest record the
# archive holds into $D/restored and the check that the log it wrote holds
# every acknowledged record of $D/acked ("LSN PAYLOAD" lines) at its LSN,
# byte for byte (replctl dump --payload full, offline).  The restore's
# message is left in $D/restore.out.

restored() {
	"$CTL" restore --archive "$1" --latest "$D/restored" > "$D/restore.out" 2>&1 ||
		fail "restore --latest: exit $?: $(cat "$D/restore.out")"
	"$CTL" dump --json --payload full "$D/restored/repl.log" > "$D/dump.json" 2> "$D/dump.err" ||
		fail "dump of the restored log: exit $?: $(cat "$D/dump.err")"
	python3 - "$D/acked" "$D/dump.json" <<-'PY' || fail "the restored log does not hold every acknowledged record"
	import json, sys
	have = {}
	for line in open(sys.argv[2]):
	    r = json.loads(line)
	    if r.get("type") == "record" and not r.get("epoch_start"):
	        have[r["lsn"]] = bytes.fromhex(r.get("payload", ""))
	bad = 0
	for line in open(sys.argv[1]):
	    lsn, text = line.rstrip("\n").split(" ", 1)
	    if have.get(int(lsn)) != text.encode():
	        bad += 1
	        if bad < 5:
	            print("LSN", lsn, "restored", have.get(int(lsn)), "acknowledged", text)
	print(len(have), "records restored;", bad, "acknowledged records missing or different")
	sys.exit(1 if bad else 0)
	PY
}

js() {
	local n=$1
	shift
	python3 - "$(status_json "$n")" "$@" <<-'PY'
	import json, sys
	try:
	    d = json.loads(sys.argv[1])
	except ValueError:
	    d = {}
	for k in sys.argv[2:]:
	    v = d
	    for part in k.split("."):
	        v = v.get(part) if isinstance(v, dict) else None
	    print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)
	PY
}
