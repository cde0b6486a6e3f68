package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// TestMain doubles as helper processes: PLFS_HELPER=main runs plfs's main (the
// end-to-end test), PLFS_HELPER=mmap does shared-mmap I/O in a process of its own (a
// page fault on a FUSE page must not stall the daemon's goroutines).
func TestMain(m *testing.M) {
	switch os.Getenv("PLFS_HELPER") {
	case "main":
		os.Args = append([]string{"plfs"}, os.Args[1:]...)
		main()
		os.Exit(0)
	case "mmap":
		if err := mmapHelper(os.Args[1:]); err != nil {
			os.Stderr.WriteString("mmap helper: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func needFuse(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("plfs tests mount FUSE with mount(2) (DirectMountStrict): they need root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("plfs tests need /dev/fuse: " + err.Error())
	}
}

type env struct {
	t                               *testing.T
	root, backing, mnt, grave, sock string
	d                               *daemon
}

// setup mounts a fresh backing dir; prepare (may be nil) fills it before the mount.
func setup(t *testing.T, writeback time.Duration, prepare func(backing string)) *env {
	t.Helper()
	needFuse(t)
	root := t.TempDir()
	e := &env{t: t, root: root, backing: filepath.Join(root, "data"), mnt: filepath.Join(root, "mnt"),
		grave: filepath.Join(root, ".plfs-grave-data"), sock: filepath.Join(root, "plfs.sock")}
	must(t, os.Mkdir(e.backing, 0o755))
	must(t, os.Mkdir(e.mnt, 0o755))
	if prepare != nil {
		prepare(e.backing)
	}
	d, err := start(config{pairs: []pair{{backing: e.backing, mountpoint: e.mnt}}, control: e.sock, writeback: writeback})
	if err != nil {
		unix.Unmount(e.mnt, unix.MNT_DETACH)
		t.Fatalf("start: %v", err)
	}
	e.d = d
	t.Cleanup(func() {
		d.close()
		unix.Unmount(e.mnt, unix.MNT_DETACH) // no-op when already unmounted
		if mounted(e.mnt) {
			t.Errorf("%s still mounted", e.mnt)
		}
	})
	return e
}

func mounted(mp string) bool {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && f[4] == mp {
			return true
		}
	}
	return false
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) m(p string) string { return filepath.Join(e.mnt, p) }
func (e *env) b(p string) string { return filepath.Join(e.backing, p) }

// cut goes through the control socket, as plfs ctl does, and checks the report file.
func (e *env) cut() report {
	e.t.Helper()
	return e.cutWith("")
}

// cutWith is cut with the request's unsynced_tail ("" the default, drop).
func (e *env) cutWith(tail string) report {
	e.t.Helper()
	repPath := filepath.Join(e.root, "report.json")
	raw, err := ctlCall(e.sock, ctlRequest{Cmd: "cut", FaultID: "f1", Report: repPath, UnsyncedTail: tail})
	if err != nil {
		e.t.Fatalf("cut: %v", err)
	}
	var rep, fromFile report
	must(e.t, json.Unmarshal(raw, &rep))
	data, err := os.ReadFile(repPath)
	must(e.t, err)
	must(e.t, json.Unmarshal(data, &fromFile))
	if fromFile.FaultID != "f1" || len(fromFile.Mounts) != 1 || rep.Mounts[0].LostBytes != fromFile.Mounts[0].LostBytes {
		e.t.Fatalf("report file differs from the answer: %s", data)
	}
	if rep.Mounts[0].Backing != e.backing || rep.Mounts[0].Mountpoint != e.mnt {
		e.t.Fatalf("report names %s / %s", rep.Mounts[0].Backing, rep.Mounts[0].Mountpoint)
	}
	return rep
}

func (e *env) status() statusOut {
	e.t.Helper()
	raw, err := ctlCall(e.sock, ctlRequest{Cmd: "status"})
	must(e.t, err)
	var st statusOut
	must(e.t, json.Unmarshal(raw, &st))
	return st
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

func writeFile(t *testing.T, p string, data []byte, sync bool) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	must(t, err)
	_, err = f.Write(data)
	must(t, err)
	if sync {
		must(t, f.Sync())
	}
	must(t, f.Close())
}

func appendFile(t *testing.T, p string, data []byte, sync bool) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.Write(data)
	must(t, err)
	if sync {
		must(t, f.Sync())
	}
	must(t, f.Close())
}

func fsyncDir(t *testing.T, p string) {
	t.Helper()
	d, err := os.Open(p)
	must(t, err)
	must(t, d.Sync())
	must(t, d.Close())
}

func wantContent(t *testing.T, p string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, want %d (first difference at %d)", p, len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func wantGone(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("%s: want gone, got %v", p, err)
	}
}

func fileRep(t *testing.T, rep report, path string) fileReport {
	t.Helper()
	for _, f := range rep.Mounts[0].Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("report has no file %q: %+v", path, rep.Mounts[0].Files)
	return fileReport{}
}

func wantRanges(t *testing.T, what string, got [][2]int64, want ...[2]int64) {
	t.Helper()
	if len(want) == 0 {
		want = [][2]int64{}
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Fatalf("%s: %s, want %s", what, g, w)
	}
}

// ---------------------------------------------------------------- file data

func TestAppendsThenCut(t *testing.T) {
	base := pattern(100, 1)
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "00000000000000000000.log"), base, false) })
	appendFile(t, e.m("00000000000000000000.log"), pattern(1000, 2), false)
	if st, _ := os.Stat(e.b("00000000000000000000.log")); st.Size() != 1100 {
		t.Fatalf("write-through: backing has %d bytes, want 1100", st.Size())
	}
	rep := e.cut()
	wantContent(t, e.b("00000000000000000000.log"), base)
	f := fileRep(t, rep, "00000000000000000000.log")
	if f.SyncedSize != 100 || f.SizeAtCut != 1100 {
		t.Fatalf("synced %d, at cut %d", f.SyncedSize, f.SizeAtCut)
	}
	wantRanges(t, "lost", f.Lost, [2]int64{100, 1100})
	wantRanges(t, "restored", f.Restored)
	if rep.Mounts[0].LostBytes != 1000 || rep.FaultID != "f1" || rep.WritebackS != nil || rep.CutAt == "" {
		t.Fatalf("report: %+v", rep)
	}
}

func TestFsyncThenAppendsThenCut(t *testing.T) {
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "seg.log"), pattern(100, 1), false) })
	all := append(pattern(100, 1), pattern(200, 2)...)
	appendFile(t, e.m("seg.log"), pattern(200, 2), true) // fsync: 300 bytes durable
	appendFile(t, e.m("seg.log"), pattern(300, 3), false)
	rep := e.cut()
	wantContent(t, e.b("seg.log"), all)
	f := fileRep(t, rep, "seg.log")
	if f.SyncedSize != 300 || f.SizeAtCut != 600 {
		t.Fatalf("synced %d, at cut %d", f.SyncedSize, f.SizeAtCut)
	}
	wantRanges(t, "lost", f.Lost, [2]int64{300, 600})
}

func TestOverwriteBelowSyncedRestored(t *testing.T) {
	orig := pattern(8192, 5)
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "f"), orig, false) })
	f, err := os.OpenFile(e.m("f"), os.O_RDWR, 0)
	must(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte("X"), 500), 1000)
	must(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte("Y"), 100), 4000)
	must(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte("Z"), 600), 1200) // overlaps the first: one pre-image
	must(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte("T"), 10), 8190) // straddles the synced size
	must(t, err)
	must(t, f.Close())
	got, _ := os.ReadFile(e.b("f"))
	if got[1000] != 'X' || got[1700] != 'Z' || len(got) != 8200 {
		t.Fatalf("write-through: backing not written")
	}
	rep := e.cut()
	wantContent(t, e.b("f"), orig)
	fr := fileRep(t, rep, "f")
	wantRanges(t, "restored", fr.Restored, [2]int64{1000, 1800}, [2]int64{4000, 4100}, [2]int64{8190, 8192})
	wantRanges(t, "lost", fr.Lost, [2]int64{8192, 8200})
}

func TestTruncateBelowSyncedRestored(t *testing.T) {
	orig := pattern(10000, 9)
	e := setup(t, -1, func(b string) {
		writeFile(t, filepath.Join(b, "a"), orig, false)
		writeFile(t, filepath.Join(b, "b"), orig, false)
	})
	must(t, os.Truncate(e.m("a"), 3000)) // SETATTR by path
	appendFile(t, e.m("a"), bytes.Repeat([]byte("Z"), 500), false)
	f, err := os.OpenFile(e.m("b"), os.O_RDWR, 0)
	must(t, err)
	must(t, f.Truncate(0)) // ftruncate through the handle
	must(t, f.Close())
	if st, _ := os.Stat(e.b("a")); st.Size() != 3500 {
		t.Fatalf("backing a: %d bytes, want 3500", st.Size())
	}
	rep := e.cut()
	wantContent(t, e.b("a"), orig)
	wantContent(t, e.b("b"), orig)
	fa := fileRep(t, rep, "a")
	wantRanges(t, "a restored", fa.Restored, [2]int64{3000, 10000})
	wantRanges(t, "a untruncated", fa.Untruncated, [2]int64{3500, 10000})
	wantRanges(t, "a lost", fa.Lost)
	fb := fileRep(t, rep, "b")
	wantRanges(t, "b untruncated", fb.Untruncated, [2]int64{0, 10000})
}

// ---------------------------------------------------------------- mmap (Kafka's indexes)

// mmapHelper: PATH OP; OP is "write-close" (dirty shared pages, then munmap and close,
// which writes them back without an fsync), "write-msync" (msync MS_SYNC) or
// "setlength" (ftruncate to 10 MiB as RandomAccessFile.setLength, map, write, close).
func mmapHelper(args []string) error {
	path, op := args[0], args[1]
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	size := 16384
	if op == "setlength" {
		size = 10 << 20
		if err := f.Truncate(int64(size)); err != nil {
			return err
		}
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	copy(mem[100:], "index-entry-1")
	copy(mem[8192:], "index-entry-2")
	if op == "write-msync" {
		if err := unix.Msync(mem, unix.MS_SYNC); err != nil {
			return err
		}
	}
	return unix.Munmap(mem)
}

func runMmapHelper(t *testing.T, path, op string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], path, op)
	cmd.Env = append(os.Environ(), "PLFS_HELPER=mmap")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mmap helper %s: %v: %s", op, err, out)
	}
}

func TestMmapWritesUndone(t *testing.T) {
	orig := pattern(16384, 3)
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "0.index"), orig, false) })
	runMmapHelper(t, e.m("0.index"), "write-close")
	got, _ := os.ReadFile(e.b("0.index"))
	if !bytes.Equal(got[100:113], []byte("index-entry-1")) || !bytes.Equal(got[8192:8205], []byte("index-entry-2")) {
		t.Fatalf("the dirty mmap pages did not reach the backing file through plfs")
	}
	st := e.status()
	if len(st.Mounts[0].Files) != 1 || st.Mounts[0].Files[0].PreimageBytes == 0 {
		t.Fatalf("status: the mmap writes were not journalled: %+v", st.Mounts[0].Files)
	}
	rep := e.cut()
	wantContent(t, e.b("0.index"), orig)
	fr := fileRep(t, rep, "0.index")
	if len(fr.Restored) == 0 || fr.Restored[0][0] > 100 || len(fr.Lost) != 0 {
		t.Fatalf("report: %+v", fr)
	}
}

func TestMmapMsyncKept(t *testing.T) {
	orig := pattern(16384, 3)
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "0.index"), orig, false) })
	f0 := e.d.mounts[0].fsyncs.Load()
	runMmapHelper(t, e.m("0.index"), "write-msync")
	if e.d.mounts[0].fsyncs.Load() == f0 {
		t.Fatalf("msync(MS_SYNC) sent no FSYNC")
	}
	rep := e.cut()
	want := append([]byte(nil), orig...)
	copy(want[100:], "index-entry-1")
	copy(want[8192:], "index-entry-2")
	wantContent(t, e.b("0.index"), want)
	if len(rep.Mounts[0].Files) != 0 {
		t.Fatalf("msync'd file in the report: %+v", rep.Mounts[0].Files)
	}
}

func TestMmapSetLengthIndexUndone(t *testing.T) {
	// A new, empty index whose entry is durable (dir fsynced) but whose data is not.
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "00000000000000000000.index"), nil, false) })
	runMmapHelper(t, e.m("00000000000000000000.index"), "setlength")
	var st unix.Stat_t
	must(t, unix.Stat(e.b("00000000000000000000.index"), &st))
	if st.Size != 10<<20 || st.Blocks*512 >= 1<<20 {
		t.Fatalf("backing index: size %d, %d bytes allocated: want 10 MiB, sparse", st.Size, st.Blocks*512)
	}
	rep := e.cut()
	wantContent(t, e.b("00000000000000000000.index"), []byte{})
	fr := fileRep(t, rep, "00000000000000000000.index")
	wantRanges(t, "lost", fr.Lost, [2]int64{0, 10 << 20})
}

// ---------------------------------------------------------------- directory entries

func TestCreateWithoutDirFsyncGone(t *testing.T) {
	e := setup(t, -1, nil)
	must(t, os.Mkdir(e.b("p"), 0o755))                                    // pre-existing (durable) partition dir
	writeFile(t, e.m("p/00000000000000000042.log"), pattern(50, 1), true) // data fsynced, dir not
	rep := e.cut()
	wantGone(t, e.b("p/00000000000000000042.log"))
	es := rep.Mounts[0].Entries
	if len(es) != 1 || es[0].Op != "create" || es[0].Path != "p/00000000000000000042.log" || es[0].Undo != "removed" {
		t.Fatalf("entries: %+v", es)
	}
}

func TestCreateWithDirFsyncKept(t *testing.T) {
	e := setup(t, -1, nil)
	writeFile(t, e.m("synced"), pattern(50, 1), true)
	writeFile(t, e.m("unsynced-data"), pattern(70, 1), false)
	fsyncDir(t, e.mnt)
	rep := e.cut()
	wantContent(t, e.b("synced"), pattern(50, 1))
	wantContent(t, e.b("unsynced-data"), []byte{}) // the entry is durable, its data is not
	if len(rep.Mounts[0].Entries) != 0 {
		t.Fatalf("entries: %+v", rep.Mounts[0].Entries)
	}
	wantRanges(t, "lost", fileRep(t, rep, "unsynced-data").Lost, [2]int64{0, 70})
}

// Kafka 3.7's leader-epoch checkpoint on truncation (KAFKA-16541): the new contents go to
// a temporary file, unsynced, which is renamed over the old one; a later flush of the
// directory (a segment roll) makes the rename durable. With the unsynced tail as zeros the
// checkpoint keeps its new size and reads as NUL bytes; dropped, it is empty.
func TestRenamedUnsyncedFileAfterDirFsync(t *testing.T) {
	for _, tail := range []string{tailZeros, tailDrop, ""} {
		t.Run("tail="+tail, func(t *testing.T) {
			e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "cp"), []byte("0\n1\n0 0\n"), false) })
			writeFile(t, e.m("cp.tmp"), []byte("0\n1\n0 42\n"), false)
			must(t, os.Rename(e.m("cp.tmp"), e.m("cp")))
			fsyncDir(t, e.mnt)
			rep := e.cutWith(tail)
			wantGone(t, e.b("cp.tmp"))
			f := fileRep(t, rep, "cp")
			wantRanges(t, "lost", f.Lost, [2]int64{0, 9})
			if tail == tailZeros {
				wantContent(t, e.b("cp"), make([]byte, 9))
				wantRanges(t, "zeroed", f.Zeroed, [2]int64{0, 9})
				if rep.UnsyncedTail != tailZeros {
					t.Fatalf("report's unsynced_tail %q", rep.UnsyncedTail)
				}
			} else {
				wantContent(t, e.b("cp"), []byte{})
				if len(f.Zeroed) != 0 || rep.UnsyncedTail != "" {
					t.Fatalf("zeroed %v, unsynced_tail %q without zeros", f.Zeroed, rep.UnsyncedTail)
				}
			}
		})
	}
}

func TestAnUnknownUnsyncedTailIsRefused(t *testing.T) {
	e := setup(t, -1, nil)
	if _, err := ctlCall(e.sock, ctlRequest{Cmd: "cut", FaultID: "f1", UnsyncedTail: "half"}); err == nil ||
		!strings.Contains(err.Error(), "unsynced_tail") {
		t.Fatalf("cut with unsynced_tail half: %v", err)
	}
	if st := e.status(); st.Frozen {
		t.Fatalf("a refused cut froze the daemon")
	}
}

func TestRenameWithoutDirFsyncRenamedBack(t *testing.T) {
	e := setup(t, -1, func(b string) {
		writeFile(t, filepath.Join(b, "1.log"), []byte("one"), false)
		writeFile(t, filepath.Join(b, "b"), []byte("B"), false)
		writeFile(t, filepath.Join(b, "c"), []byte("C"), false)
		writeFile(t, filepath.Join(b, "kept"), []byte("K"), false)
		os.Mkdir(filepath.Join(b, "sub"), 0o755)
	})
	must(t, os.Rename(e.m("1.log"), e.m("1.log.deleted"))) // Kafka's segment delete, no dir flush
	must(t, os.Rename(e.m("b"), e.m("c")))                 // replaces c
	must(t, os.Rename(e.m("kept"), e.m("sub/kept")))       // cross-dir: pending in both
	fsyncDir(t, e.m("sub"))                                // one of the two is not enough
	wantContent(t, e.b("c"), []byte("B"))
	rep := e.cut()
	wantContent(t, e.b("1.log"), []byte("one"))
	wantGone(t, e.b("1.log.deleted"))
	wantContent(t, e.b("b"), []byte("B"))
	wantContent(t, e.b("c"), []byte("C"))
	wantContent(t, e.b("kept"), []byte("K"))
	wantGone(t, e.b("sub/kept"))
	es := rep.Mounts[0].Entries
	if len(es) != 3 || es[2].Op != "rename" || es[2].Path != "1.log" || es[2].To != "1.log.deleted" || es[2].Undo != "renamed back" ||
		es[1].Undo != "renamed back, replaced target restored" {
		t.Fatalf("entries: %+v", es)
	}
	assertGraveEmpty(t, e)
}

func TestRenameWithDirFsyncKept(t *testing.T) {
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "x"), []byte("X"), false) })
	must(t, os.Rename(e.m("x"), e.m("y")))
	fsyncDir(t, e.mnt)
	rep := e.cut()
	wantGone(t, e.b("x"))
	wantContent(t, e.b("y"), []byte("X"))
	if len(rep.Mounts[0].Entries) != 0 {
		t.Fatalf("entries: %+v", rep.Mounts[0].Entries)
	}
}

func assertGraveEmpty(t *testing.T, e *env) {
	t.Helper()
	ents, err := os.ReadDir(e.grave)
	must(t, err)
	if len(ents) != 0 {
		t.Fatalf("graveyard not empty: %v", ents)
	}
}

func TestUnlinkWithoutDirFsyncRestored(t *testing.T) {
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "victim"), pattern(3000, 4), false) })
	must(t, os.Remove(e.m("victim")))
	wantGone(t, e.m("victim"))
	wantGone(t, e.b("victim"))
	if ents, _ := os.ReadDir(e.grave); len(ents) != 1 {
		t.Fatalf("graveyard: %v, want the victim", ents)
	}
	rep := e.cut()
	wantContent(t, e.b("victim"), pattern(3000, 4))
	es := rep.Mounts[0].Entries
	if len(es) != 1 || es[0].Op != "unlink" || es[0].Undo != "restored" {
		t.Fatalf("entries: %+v", es)
	}
	assertGraveEmpty(t, e)
}

func TestUnlinkWithDirFsyncGone(t *testing.T) {
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "victim"), pattern(3000, 4), false) })
	must(t, os.Remove(e.m("victim")))
	fsyncDir(t, e.mnt)
	assertGraveEmpty(t, e) // FSYNCDIR deleted it for good
	rep := e.cut()
	wantGone(t, e.b("victim"))
	if len(rep.Mounts[0].Entries) != 0 {
		t.Fatalf("entries: %+v", rep.Mounts[0].Entries)
	}
}

func TestMkdirRmdirUndone(t *testing.T) {
	e := setup(t, -1, func(b string) { os.Mkdir(filepath.Join(b, "old"), 0o755) })
	must(t, os.Mkdir(e.m("new"), 0o755))
	must(t, os.Remove(e.m("old")))
	must(t, os.Mkdir(e.m("part-0"), 0o755))
	writeFile(t, e.m("part-0/f"), []byte("F"), true)
	fsyncDir(t, e.m("part-0")) // f's entry durable, part-0's own entry not
	if err := os.Remove(e.m("part-0")); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("rmdir of a non-empty dir: %v", err)
	}
	rep := e.cut()
	wantGone(t, e.b("new"))
	wantGone(t, e.b("part-0"))
	if st, err := os.Stat(e.b("old")); err != nil || !st.IsDir() {
		t.Fatalf("old: %v", err)
	}
	undo := map[string]string{}
	for _, en := range rep.Mounts[0].Entries {
		undo[en.Op+" "+en.Path] = en.Undo
	}
	if undo["mkdir new"] != "removed" || undo["rmdir old"] != "restored" || undo["mkdir part-0"] != "removed with its contents" {
		t.Fatalf("entries: %+v", rep.Mounts[0].Entries)
	}
}

// ---------------------------------------------------------------- write-back, freezing

// writebackScenario: one append and one file older than a second, then one of each newer;
// cut (by the mount's or the cut's own write-back of 1 s) keeps the old and drops the new.
func writebackScenario(t *testing.T, mountWriteback time.Duration, cut func(e *env) report) {
	e := setup(t, mountWriteback, func(b string) { writeFile(t, filepath.Join(b, "seg.log"), nil, false) })
	appendFile(t, e.m("seg.log"), pattern(100, 1), false)
	writeFile(t, e.m("old-file"), []byte("old"), false)
	time.Sleep(1600 * time.Millisecond) // > 1 s plus a tick: written back
	appendFile(t, e.m("seg.log"), pattern(100, 2), false)
	writeFile(t, e.m("new-file"), []byte("new"), false)
	rep := cut(e)
	wantContent(t, e.b("seg.log"), pattern(100, 1))
	wantContent(t, e.b("old-file"), []byte("old"))
	wantGone(t, e.b("new-file"))
	wantRanges(t, "lost", fileRep(t, rep, "seg.log").Lost, [2]int64{100, 200})
	if rep.WritebackS == nil || *rep.WritebackS != 1 {
		t.Fatalf("writeback_s: %v", rep.WritebackS)
	}
}

func TestWritebackOneSecond(t *testing.T) {
	writebackScenario(t, time.Second, func(e *env) report { return e.cut() })
}

func TestWritebackAtTheCut(t *testing.T) {
	// No --writeback-s on the mount: the power loss says it (ctl cut --writeback-s 1).
	writebackScenario(t, -1, func(e *env) report {
		wb := 1.0
		raw, err := ctlCall(e.sock, ctlRequest{Cmd: "cut", FaultID: "f1", WritebackS: &wb})
		must(t, err)
		var rep report
		must(t, json.Unmarshal(raw, &rep))
		return rep
	})
}

func TestDurableBefore(t *testing.T) {
	// What a node wrote before the experiment (its format) survives; what came after not.
	e := setup(t, -1, nil)
	writeFile(t, e.m("bootstrap.checkpoint"), []byte("formatted"), false)
	time.Sleep(50 * time.Millisecond)
	before := time.Now().UnixMilli()
	time.Sleep(50 * time.Millisecond)
	writeFile(t, e.m("new-file"), []byte("new"), false)
	raw, err := ctlCall(e.sock, ctlRequest{Cmd: "cut", FaultID: "f1", DurableBeforeMs: &before})
	must(t, err)
	var rep report
	must(t, json.Unmarshal(raw, &rep))
	wantContent(t, e.b("bootstrap.checkpoint"), []byte("formatted"))
	wantGone(t, e.b("new-file"))
	if rep.DurableBeforeMs == nil || *rep.DurableBeforeMs != before {
		t.Fatalf("durable_before_ms: %v", rep.DurableBeforeMs)
	}
}

func TestWritebackZeroUndoesNothing(t *testing.T) {
	e := setup(t, 0, func(b string) { writeFile(t, filepath.Join(b, "seg.log"), []byte("abc"), false) })
	appendFile(t, e.m("seg.log"), []byte("def"), false)
	writeFile(t, e.m("new"), []byte("N"), false)
	must(t, os.Remove(e.m("seg.log")))
	rep := e.cut()
	wantGone(t, e.b("seg.log"))
	wantContent(t, e.b("new"), []byte("N"))
	if len(rep.Mounts[0].Files) != 0 || len(rep.Mounts[0].Entries) != 0 {
		t.Fatalf("report: %+v", rep.Mounts[0])
	}
}

func TestFrozenAfterCut(t *testing.T) {
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "f"), []byte("durable"), false) })
	f, err := os.OpenFile(e.m("f"), os.O_WRONLY, 0)
	must(t, err)
	e.cut()
	done := make(chan error, 1)
	go func() {
		_, err := f.WriteAt([]byte("after the cut"), 0)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a write after the cut returned (%v); want it blocked", err)
	case <-time.After(300 * time.Millisecond):
	}
	wantContent(t, e.b("f"), []byte("durable"))
	if st := e.status(); !st.Frozen || st.FaultID != "f1" {
		t.Fatalf("status after cut: %+v", st)
	}
	// The same fault id again: the same report; another: refused.
	if _, err := ctlCall(e.sock, ctlRequest{Cmd: "cut", FaultID: "f1"}); err != nil {
		t.Fatalf("repeated cut: %v", err)
	}
	if _, err := ctlCall(e.sock, ctlRequest{Cmd: "cut", FaultID: "f2"}); err == nil {
		t.Fatalf("a second fault's cut was accepted")
	}
	e.d.close() // releases the blocked request with EIO
	if err := <-done; err == nil {
		t.Fatalf("the frozen write succeeded")
	}
	f.Close()
	wantContent(t, e.b("f"), []byte("durable"))
}

func TestCtlStatus(t *testing.T) {
	e := setup(t, -1, func(b string) { writeFile(t, filepath.Join(b, "seg.log"), pattern(100, 1), false) })
	appendFile(t, e.m("seg.log"), pattern(50, 2), false)
	f, err := os.OpenFile(e.m("seg.log"), os.O_RDWR, 0)
	must(t, err)
	_, err = f.WriteAt([]byte("xx"), 10)
	must(t, err)
	must(t, f.Close())
	must(t, os.Mkdir(e.m("d"), 0o755))
	writeFile(t, e.m("d/new"), nil, false)
	// Through the CLI entry point, as the harness will call it.
	out := captureStdout(t, func() error { return cmdCtl([]string{"--control", e.sock, "status"}) })
	var st statusOut
	must(t, json.Unmarshal(out, &st))
	if st.Frozen || len(st.Mounts) != 1 {
		t.Fatalf("status: %s", out)
	}
	ms := st.Mounts[0]
	if len(ms.Files) != 1 {
		t.Fatalf("files: %+v", ms.Files)
	}
	fs0 := ms.Files[0]
	if fs0.Path != "seg.log" || fs0.SyncedSize != 100 || fs0.Size != 150 || fs0.UnsyncedBytes != 52 || fs0.PreimageBytes != 2 {
		t.Fatalf("file status: %+v", fs0)
	}
	if len(ms.Entries) != 2 || ms.Entries[0].Op != "mkdir" || ms.Entries[0].PendingIn[0] != "." ||
		ms.Entries[1].Op != "create" || ms.Entries[1].Path != "d/new" || ms.Entries[1].PendingIn[0] != "d" {
		t.Fatalf("entries: %+v", ms.Entries)
	}
	if ms.UnsyncedBytes != 52 || ms.Writes == 0 {
		t.Fatalf("mount status: %+v", ms)
	}
}

func captureStdout(t *testing.T, fn func() error) []byte {
	t.Helper()
	r, w, err := os.Pipe()
	must(t, err)
	old := os.Stdout
	os.Stdout = w
	ferr := fn()
	os.Stdout = old
	w.Close()
	var buf bytes.Buffer
	buf.ReadFrom(r)
	must(t, ferr)
	return buf.Bytes()
}

// ---------------------------------------------------------------- the passthrough trap

func TestFileHandleHasNoPassthrough(t *testing.T) {
	var h fs.FileHandle = &file{}
	if _, ok := h.(fs.FilePassthroughFder); ok {
		t.Fatal("plfs's file handle implements PassthroughFd: go-fuse would hand the backing file to the kernel")
	}
	var p fs.FileHandle = &passthroughFile{&file{}}
	if _, ok := p.(fs.FilePassthroughFder); !ok {
		t.Fatal("the test-only passthrough handle lost PassthroughFd")
	}
}

func TestSelfTestRefusesPassthrough(t *testing.T) {
	needFuse(t)
	root := t.TempDir()
	backing, mnt := filepath.Join(root, "data"), filepath.Join(root, "mnt")
	must(t, os.Mkdir(backing, 0o755))
	must(t, os.Mkdir(mnt, 0o755))
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	d, err := start(config{pairs: []pair{{backing: backing, mountpoint: mnt}}, writeback: -1, unsafePassthrough: true})
	if err == nil {
		d.close()
		t.Skip("this kernel did not take FUSE passthrough (the trap cannot spring here)")
	}
	if !strings.Contains(err.Error(), "did not reach plfs") {
		t.Fatalf("start with passthrough: %v", err)
	}
	if mounted(mnt) {
		t.Fatalf("refused, but still mounted")
	}
	if ents, _ := os.ReadDir(backing); len(ents) != 0 {
		t.Fatalf("the self-test left %v", ents)
	}
}

// ---------------------------------------------------------------- the CLI, end to end

// startMount runs `plfs mount` in a process of its own (this test binary as plfs) and waits
// for its ready line; the process is killed and the mounts detached at the test's end.
func startMount(t *testing.T, sock string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"mount", "--control", sock}, args...)...)
	cmd.Env = append(os.Environ(), "PLFS_HELPER=main")
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		for i, a := range args {
			if a == "--pair" && i+1 < len(args) {
				parts := strings.Split(args[i+1], ":")
				unix.Unmount(parts[1], unix.MNT_DETACH)
			}
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "ready:") {
		t.Fatalf("ready line: %q, %v", line, err)
	}
	return cmd, line
}

func TestMountCommandEndToEnd(t *testing.T) {
	needFuse(t)
	root := t.TempDir()
	b1, m1, b2, m2 := filepath.Join(root, "1", "data"), filepath.Join(root, "m1"), filepath.Join(root, "2", "data"), filepath.Join(root, "m2")
	for _, d := range []string{b1, m1, b2, m2} {
		must(t, os.MkdirAll(d, 0o755))
	}
	writeFile(t, filepath.Join(b1, "a.log"), []byte("a1"), false)
	sock := filepath.Join(root, "plfs.sock")
	cmd, line := startMount(t, sock, "--pair", b1+":"+m1, "--pair", b2+":"+m2,
		"--log", filepath.Join(root, "plfs.log"))
	if !strings.Contains(line, "ready: 2 mount(s)") {
		logData, _ := os.ReadFile(filepath.Join(root, "plfs.log"))
		t.Fatalf("ready line: %q; log: %s", line, logData)
	}
	appendFile(t, filepath.Join(m1, "a.log"), []byte("-lost"), false)
	writeFile(t, filepath.Join(m2, "b.log"), []byte("b"), false)
	repPath := filepath.Join(root, "rep.json")
	out := captureStdout(t, func() error {
		return cmdCtl([]string{"--control", sock, "cut", "--fault-id", "pl-1", "--report", repPath})
	})
	var rep report
	must(t, json.Unmarshal(out, &rep))
	fromFile, _ := os.ReadFile(repPath)
	if rep.FaultID != "pl-1" || len(rep.Mounts) != 2 || rep.Mounts[0].LostBytes != 5 ||
		len(rep.Mounts[1].Entries) != 1 || !bytes.Contains(fromFile, []byte(`"pl-1"`)) {
		t.Fatalf("report: %s", out)
	}
	wantContent(t, filepath.Join(b1, "a.log"), []byte("a1"))
	wantGone(t, filepath.Join(b2, "b.log"))
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("plfs mount after SIGTERM: %v", err)
	}
	if mounted(m1) || mounted(m2) {
		t.Fatalf("still mounted after SIGTERM")
	}
}

func TestCutExitAbortsTheConnection(t *testing.T) {
	// The power is off: after `cut --exit` the daemon is gone, and a request still to come
	// fails at once instead of waiting for ever (a dying JVM's last flushes).
	needFuse(t)
	root := t.TempDir()
	b, m := filepath.Join(root, "data"), filepath.Join(root, "m")
	must(t, os.MkdirAll(b, 0o755))
	must(t, os.MkdirAll(m, 0o755))
	sock := filepath.Join(root, "plfs.sock")
	cmd, _ := startMount(t, sock, "--pair", b+":"+m)
	f, err := os.OpenFile(filepath.Join(m, "seg.log"), os.O_CREATE|os.O_WRONLY, 0o644)
	must(t, err)
	defer f.Close()
	_, err = f.Write([]byte("unsynced"))
	must(t, err)
	out := captureStdout(t, func() error {
		return cmdCtl([]string{"--control", sock, "cut", "--fault-id", "x", "--exit"})
	})
	var rep report
	must(t, json.Unmarshal(out, &rep))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the daemon after cut --exit: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.Write([]byte("after the power went"))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("a write after the daemon exited succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("a write after cut --exit still waits")
	}
	wantGone(t, filepath.Join(b, "seg.log"))
}
