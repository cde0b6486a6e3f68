package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// partition makes a hand-made partition dir: two segments with data, an empty active
// segment above them, and index files.
func partition(t *testing.T) (string, map[string][]byte) {
	dir := filepath.Join(t.TempDir(), "chaos-0")
	must(t, os.Mkdir(dir, 0o755))
	files := map[string][]byte{
		"00000000000000000000.log":       pattern(1000, 1),
		"00000000000000000500.log":       pattern(800, 2),
		"00000000000000000500.index":     pattern(64, 3),
		"00000000000000001000.log":       {},
		"00000000000000000000.timeindex": pattern(48, 4),
		"leader-epoch-checkpoint":        []byte("0\n1\n0 0\n"),
	}
	for n, data := range files {
		writeFile(t, filepath.Join(dir, n), data, false)
	}
	return dir, files
}

func runCorrupt(t *testing.T, args ...string) corruptResult {
	t.Helper()
	res := filepath.Join(t.TempDir(), "result.json")
	captureStdout(t, func() error { return cmdCorrupt(append(args, "--result", res)) })
	data, err := os.ReadFile(res)
	must(t, err)
	var r corruptResult
	must(t, json.Unmarshal(data, &r))
	return r
}

func TestCorruptBitflip(t *testing.T) {
	dir, files := partition(t)
	r := runCorrupt(t, "--dir", dir, "--mode", "bitflip", "--bytes", "5", "--seed", "42", "--within-tail", "100")
	if r.File != "00000000000000000500.log" || r.SizeBefore != 800 || r.SizeAfter != 800 || len(r.Flips) != 5 ||
		len(r.SkippedEmpty) != 1 || r.SkippedEmpty[0] != "00000000000000001000.log" {
		t.Fatalf("result: %+v", r)
	}
	orig := files["00000000000000000500.log"]
	got, _ := os.ReadFile(filepath.Join(dir, r.File))
	changed := 0
	for i := range got {
		if got[i] != orig[i] {
			changed++
		}
	}
	if changed != 5 {
		t.Fatalf("%d bytes changed, want 5", changed)
	}
	last := int64(-1)
	for _, f := range r.Flips {
		x := f.Old ^ f.New
		if f.Offset < 700 || f.Offset >= 800 || f.Offset <= last || x == 0 || x&(x-1) != 0 ||
			int(orig[f.Offset]) != f.Old || int(got[f.Offset]) != f.New {
			t.Fatalf("flip %+v (want one bit, in the last 100 bytes, offsets ascending)", f)
		}
		last = f.Offset
	}
	for n, data := range files {
		if n == r.File {
			continue
		}
		if now, _ := os.ReadFile(filepath.Join(dir, n)); !bytes.Equal(now, data) {
			t.Fatalf("%s changed", n)
		}
	}
	// Deterministic: the same seed on a fresh copy gives the same flips; another differs.
	dir2, _ := partition(t)
	r2 := runCorrupt(t, "--dir", dir2, "--mode", "bitflip", "--bytes", "5", "--seed", "42", "--within-tail", "100")
	a, _ := json.Marshal(r.Flips)
	b, _ := json.Marshal(r2.Flips)
	if !bytes.Equal(a, b) {
		t.Fatalf("same seed, different flips: %s vs %s", a, b)
	}
	dir3, _ := partition(t)
	r3 := runCorrupt(t, "--dir", dir3, "--mode", "bitflip", "--bytes", "5", "--seed", "43", "--within-tail", "100")
	c, _ := json.Marshal(r3.Flips)
	if bytes.Equal(a, c) {
		t.Fatalf("seeds 42 and 43 gave the same flips")
	}
}

func TestCorruptTruncate(t *testing.T) {
	dir, files := partition(t)
	r := runCorrupt(t, "--dir", dir, "--mode", "truncate", "--bytes", "300", "--seed", "1")
	if r.File != "00000000000000000500.log" || r.SizeBefore != 800 || r.SizeAfter != 500 || len(r.Removed) != 2 || r.Removed[0] != 500 {
		t.Fatalf("result: %+v", r)
	}
	wantContent(t, filepath.Join(dir, r.File), files[r.File][:500])
	wantContent(t, filepath.Join(dir, "00000000000000000000.log"), files["00000000000000000000.log"])
}

func TestCorruptErrors(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "r.json")
	if err := cmdCorrupt([]string{"--dir", dir, "--mode", "bitflip", "--bytes", "1", "--seed", "1", "--result", res}); err == nil {
		t.Fatal("no segment: want an error")
	}
	data, _ := os.ReadFile(res)
	if !bytes.Contains(data, []byte(`"error"`)) {
		t.Fatalf("result without error: %s", data)
	}
	pdir, _ := partition(t)
	if _, err := corrupt(pdir, "bitflip", 101, 1, 100); err == nil {
		t.Fatal("more flips than bytes in the tail: want an error")
	}
}
