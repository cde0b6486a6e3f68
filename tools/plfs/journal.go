package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// devino names a backing inode.
type devino struct{ dev, ino uint64 }

func keyOf(st *unix.Stat_t) devino { return devino{uint64(st.Dev), st.Ino} }

// sizeEvent: the file's size after an operation at time t (kept only with --writeback-s).
type sizeEvent struct {
	t    time.Time
	size int64
}

// fileState is the undo state of one backing file with unsynced changes. It exists from
// the file's first change after its last fsync (or since plfs started) until the next
// fsync, so synced is "the size at the last fsync, or when first seen".
type fileState struct {
	mu     sync.Mutex
	key    devino
	fd     int    // plfs's own O_RDWR descriptor: undo works wherever the file has moved
	path   string // relative path when the state was made (fallback for the report)
	synced int64  // size at the last fsync/fdatasync, or when first seen
	size   int64  // current size (every change goes through plfs)
	pre    preimages
	sizes  []sizeEvent
	since  time.Time
}

// saveLocked saves the pre-images of [a, b) ∩ [0, synced) not saved yet. Holds f.mu.
func (f *fileState) saveLocked(a, b int64, now time.Time) error {
	if b > f.synced {
		b = f.synced
	}
	for _, g := range f.pre.gaps(a, b) {
		n := g[1] - g[0]
		buf := make([]byte, n)
		got, err := unix.Pread(f.fd, buf, g[0])
		if err != nil {
			return err
		}
		// A short read (the file is shorter than synced: cannot happen while every
		// change goes through plfs) leaves zeros, which is what the file would show.
		_ = got
		p := piece{off: g[0], n: n, t: now}
		if !allZero(buf) {
			p.data = buf
		}
		f.pre.add(p)
	}
	return nil
}

func (f *fileState) sizeChangedLocked(now time.Time, wb bool) {
	if !wb {
		return
	}
	if n := len(f.sizes); n > 0 && now.Sub(f.sizes[n-1].t) < tick {
		f.sizes[n-1].size = f.size
		return
	}
	f.sizes = append(f.sizes, sizeEvent{now, f.size})
}

func (f *fileState) dirtyLocked() bool {
	return f.size != f.synced || len(f.pre.ps) > 0
}

// entryOp is one directory-entry change not yet made durable by FSYNCDIR of its
// director(y/ies).
type entryOp struct {
	seq     uint64
	t       time.Time
	op      string // create mknod symlink link mkdir unlink rmdir rename exchange
	dir1    *dirRef
	name1   string
	dir2    *dirRef // rename/exchange target dir
	name2   string
	ino     uint64 // the inode an entry was made for (create-like ops)
	grave   string // name in the graveyard of the victim (unlink, rmdir, replaced target)
	path    string // relative paths at the time of the op, for reports
	to      string
	pending map[devino]bool
}

// dirRef keeps a directory with pending ops open (O_PATH), so undo works by descriptor
// even if the directory was renamed since.
type dirRef struct {
	key  devino
	fd   int
	refs int
}

type fileReport struct {
	Path        string     `json:"path"`
	SyncedSize  int64      `json:"synced_size"`
	SizeAtCut   int64      `json:"size_at_cut"`
	Lost        [][2]int64 `json:"lost"`
	Restored    [][2]int64 `json:"restored"`
	Untruncated [][2]int64 `json:"untruncated"`
	// Zeroed: the unsynced growth kept at its size as zeros (a cut with unsynced_tail
	// zeros); then Lost names the same bytes, whose data is gone all the same.
	Zeroed [][2]int64 `json:"zeroed,omitempty"`
	Error  string     `json:"error,omitempty"`
}

type entryReport struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	To   string `json:"to,omitempty"`
	Undo string `json:"undo"`
}

type mountReport struct {
	Backing       string        `json:"backing"`
	Mountpoint    string        `json:"mountpoint"`
	Files         []fileReport  `json:"files"`
	Entries       []entryReport `json:"entries"`
	LostBytes     int64         `json:"lost_bytes"`
	RestoredBytes int64         `json:"restored_bytes"`
}

// journal is the undo journal of one mount.
type journal struct {
	d       *daemon
	backing string // absolute, clean
	grave   string
	graveFd int
	enabled bool // false with --writeback-s 0: every change is durable at once

	mu    sync.Mutex // files, dirs, ops; held for the whole of an entry op
	files map[devino]*fileState
	dirs  map[devino]*dirRef
	ops   []*entryOp
}

func newJournal(d *daemon, backing, grave string, enabled bool) (*journal, error) {
	gfd, err := unix.Open(grave, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("graveyard %s: %w", grave, err)
	}
	return &journal{
		d: d, backing: backing, grave: grave, graveFd: gfd, enabled: enabled,
		files: map[devino]*fileState{}, dirs: map[devino]*dirRef{},
	}, nil
}

// ---------------------------------------------------------------- file data

// state returns the undo state of the file open at fd, making it if absent.
func (j *journal) state(fd int, rel string) (*fileState, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	k := keyOf(&st)
	j.mu.Lock()
	defer j.mu.Unlock()
	if f := j.files[k]; f != nil {
		return f, nil
	}
	own, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("reopen %s read-write: %w", rel, err)
	}
	f := &fileState{key: k, fd: own, path: rel, synced: st.Size, size: st.Size, since: time.Now()}
	j.files[k] = f
	return f, nil
}

// write: pwrite data at off through the journal.
func (j *journal) write(fd int, rel string, data []byte, off int64) (int, error) {
	if !j.enabled {
		return unix.Pwrite(fd, data, off)
	}
	f, err := j.state(fd, rel)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.saveLocked(off, off+int64(len(data)), now); err != nil {
		return 0, err
	}
	n, err := unix.Pwrite(fd, data, off)
	if n > 0 && off+int64(n) > f.size {
		f.size = off + int64(n)
		f.sizeChangedLocked(now, j.d.cfg.writeback != 0)
	}
	return n, err
}

// truncate: ftruncate through the journal.
func (j *journal) truncate(fd int, rel string, size int64) error {
	if !j.enabled {
		return unix.Ftruncate(fd, size)
	}
	f, err := j.state(fd, rel)
	if err != nil {
		return err
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if size < f.synced {
		if err := f.saveLocked(size, f.synced, now); err != nil {
			return err
		}
	}
	// plfs's own descriptor: the kernel may pass a handle that is not open for writing.
	if err := unix.Ftruncate(f.fd, size); err != nil {
		return err
	}
	f.size = size
	f.sizeChangedLocked(now, j.d.cfg.writeback != 0)
	return nil
}

// allocate: fallocate through the journal (punch/zero ranges save pre-images first).
func (j *journal) allocate(fd int, rel string, off, n int64, mode uint32) error {
	if mode&(unix.FALLOC_FL_COLLAPSE_RANGE|unix.FALLOC_FL_INSERT_RANGE) != 0 {
		return unix.EOPNOTSUPP
	}
	if !j.enabled {
		return unix.Fallocate(fd, mode, off, n)
	}
	f, err := j.state(fd, rel)
	if err != nil {
		return err
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if mode&(unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_ZERO_RANGE) != 0 {
		if err := f.saveLocked(off, off+n, now); err != nil {
			return err
		}
	}
	if err := unix.Fallocate(fd, mode, off, n); err != nil {
		return err
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Size != f.size {
		f.size = st.Size
		f.sizeChangedLocked(now, j.d.cfg.writeback != 0)
	}
	return nil
}

// fsync: the file's changes are durable: forget its undo state.
func (j *journal) fsync(fd int) error {
	if !j.enabled {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	j.mu.Lock()
	f := j.files[keyOf(&st)]
	delete(j.files, keyOf(&st))
	j.mu.Unlock()
	if f != nil {
		f.mu.Lock()
		unix.Close(f.fd)
		f.fd = -1
		f.mu.Unlock()
	}
	return nil
}

// ---------------------------------------------------------------- directory entries

// dirRefLocked returns a counted reference to the directory at path. Holds j.mu.
func (j *journal) dirRefLocked(path string) (*dirRef, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	k := keyOf(&st)
	if r := j.dirs[k]; r != nil {
		unix.Close(fd)
		r.refs++
		return r, nil
	}
	r := &dirRef{key: k, fd: fd, refs: 1}
	j.dirs[k] = r
	return r, nil
}

func (j *journal) releaseDirLocked(r *dirRef) {
	if r == nil {
		return
	}
	r.refs--
	if r.refs <= 0 {
		unix.Close(r.fd)
		delete(j.dirs, r.key)
	}
}

// record appends an entry op (holds j.mu). dir2 may be nil.
func (j *journal) recordLocked(op *entryOp) {
	op.seq = j.d.seq.Add(1)
	op.t = time.Now()
	op.pending = map[devino]bool{op.dir1.key: true}
	if op.dir2 != nil {
		op.pending[op.dir2.key] = true
	}
	j.ops = append(j.ops, op)
}

// graveName: a fresh name in the graveyard for a victim.
func (j *journal) graveName(name string) string {
	return fmt.Sprintf("%d-%s", j.d.seq.Add(1), name)
}

// forgetOpLocked drops an op that became durable; its victim, if any, is deleted for good.
func (j *journal) forgetOpLocked(op *entryOp) {
	if op.grave != "" {
		if err := os.RemoveAll(filepath.Join(j.grave, op.grave)); err != nil {
			log.Printf("plfs: graveyard %s: %v", op.grave, err)
		}
	}
	j.releaseDirLocked(op.dir1)
	j.releaseDirLocked(op.dir2)
}

// fsyncDir: FSYNCDIR of the directory key: its pending ops are durable.
func (j *journal) fsyncDir(k devino) {
	if !j.enabled {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	kept := j.ops[:0]
	for _, op := range j.ops {
		delete(op.pending, k)
		if len(op.pending) == 0 {
			j.forgetOpLocked(op)
			continue
		}
		kept = append(kept, op)
	}
	for i := len(kept); i < len(j.ops); i++ {
		j.ops[i] = nil
	}
	j.ops = kept
}

// ---------------------------------------------------------------- write-back

// writeback forgets every undo item older than cutoff (the kernel's write-back and the
// file system's journal commit).
func (j *journal) writeback(cutoff time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for k, f := range j.files {
		f.mu.Lock()
		f.pre.forgetUpTo(cutoff)
		last := -1
		for i, ev := range f.sizes {
			if !ev.t.After(cutoff) {
				last = i
			}
		}
		if last >= 0 {
			synced := f.sizes[last].size
			// Bytes above a later, smaller size were cut off after the cutoff without
			// a pre-image (they were above synced then): never keep what came after.
			for _, ev := range f.sizes[last+1:] {
				synced = min(synced, ev.size)
			}
			f.synced = min(synced, f.size)
			f.sizes = append(f.sizes[:0], f.sizes[last+1:]...)
		}
		if !f.dirtyLocked() {
			unix.Close(f.fd)
			f.fd = -1
			delete(j.files, k)
		}
		f.mu.Unlock()
	}
	kept := j.ops[:0]
	for _, op := range j.ops {
		if !op.t.After(cutoff) {
			j.forgetOpLocked(op)
			continue
		}
		kept = append(kept, op)
	}
	for i := len(kept); i < len(j.ops); i++ {
		j.ops[i] = nil
	}
	j.ops = kept
}

// ---------------------------------------------------------------- reports

// relPath names the file open at fd relative to the mount, as it is now.
func (j *journal) relPath(fd int, fallback string) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return fallback
	}
	if strings.HasSuffix(p, " (deleted)") {
		return fallback + " (deleted)"
	}
	if r, ok := strings.CutPrefix(p, j.backing+"/"); ok {
		return r
	}
	if r, ok := strings.CutPrefix(p, j.grave+"/"); ok {
		for _, op := range j.ops {
			if op.grave == r {
				if op.op == "rename" {
					return op.to + " (replaced)"
				}
				return op.path + " (unlinked)"
			}
		}
	}
	return fallback
}

func (j *journal) relDir(r *dirRef, name string) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", r.fd))
	if err == nil {
		if p == j.backing {
			return name
		}
		if rel, ok := strings.CutPrefix(p, j.backing+"/"); ok {
			return rel + "/" + name
		}
	}
	return name
}

type fileStatus struct {
	Path           string     `json:"path"`
	SyncedSize     int64      `json:"synced_size"`
	Size           int64      `json:"size"`
	UnsyncedBytes  int64      `json:"unsynced_bytes"`
	PreimageRanges [][2]int64 `json:"preimage_ranges"`
	PreimageBytes  int64      `json:"preimage_bytes"`
	Since          string     `json:"since"`
}

type entryStatus struct {
	Op        string   `json:"op"`
	Path      string   `json:"path"`
	To        string   `json:"to,omitempty"`
	At        string   `json:"at"`
	PendingIn []string `json:"pending_in"`
}

type mountStatus struct {
	Backing       string        `json:"backing"`
	Mountpoint    string        `json:"mountpoint"`
	Grave         string        `json:"grave"`
	Writes        uint64        `json:"writes"`
	Files         []fileStatus  `json:"files"`
	Entries       []entryStatus `json:"entries"`
	UnsyncedBytes int64         `json:"unsynced_bytes"`
}

func (j *journal) status(ms *mountStatus) {
	j.mu.Lock()
	defer j.mu.Unlock()
	ms.Files = []fileStatus{}
	ms.Entries = []entryStatus{}
	for _, f := range j.files {
		f.mu.Lock()
		if f.dirtyLocked() {
			fs := fileStatus{
				Path: j.relPath(f.fd, f.path), SyncedSize: f.synced, Size: f.size,
				PreimageRanges: f.pre.ranges(), PreimageBytes: f.pre.bytes(),
				Since: f.since.UTC().Format(time.RFC3339Nano),
			}
			fs.UnsyncedBytes = max(0, f.size-f.synced) + fs.PreimageBytes
			ms.UnsyncedBytes += fs.UnsyncedBytes
			ms.Files = append(ms.Files, fs)
		}
		f.mu.Unlock()
	}
	sort.Slice(ms.Files, func(a, b int) bool { return ms.Files[a].Path < ms.Files[b].Path })
	for _, op := range j.ops {
		es := entryStatus{Op: op.op, Path: op.path, To: op.to, At: op.t.UTC().Format(time.RFC3339Nano), PendingIn: []string{}}
		for _, r := range []*dirRef{op.dir1, op.dir2} {
			if r != nil && op.pending[r.key] {
				d := strings.TrimSuffix(j.relDir(r, ""), "/")
				if d == "" {
					d = "."
				}
				es.PendingIn = append(es.PendingIn, d)
			}
		}
		ms.Entries = append(ms.Entries, es)
	}
}

// ---------------------------------------------------------------- the cut

// cut undoes every unsynced change of the mount. The caller holds the daemon's gate
// exclusively, so no request is in flight. zeros: a file's unsynced growth keeps its size
// and reads as zeros instead of being cut off (its entry operations are undone all the
// same: a file whose creation never became durable is still removed).
func (j *journal) cut(mr *mountReport, zeros bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	mr.Files = []fileReport{}
	mr.Entries = []entryReport{}

	// File data: names first (before entries move), then the undo by descriptor.
	type item struct {
		f  *fileState
		fr fileReport
	}
	var items []item
	for _, f := range j.files {
		f.mu.Lock()
		var st unix.Stat_t
		fr := fileReport{Path: j.relPath(f.fd, f.path), SyncedSize: f.synced, SizeAtCut: f.size,
			Lost: [][2]int64{}, Restored: [][2]int64{}, Untruncated: [][2]int64{}}
		if unix.Fstat(f.fd, &st) == nil {
			fr.SizeAtCut = st.Size
		}
		items = append(items, item{f, fr})
	}
	for i := range items {
		f, fr := items[i].f, &items[i].fr
		if fr.SizeAtCut > f.synced {
			fr.Lost = append(fr.Lost, [2]int64{f.synced, fr.SizeAtCut})
		} else if fr.SizeAtCut < f.synced {
			fr.Untruncated = append(fr.Untruncated, [2]int64{fr.SizeAtCut, f.synced})
		}
		fr.Restored = f.pre.ranges()
		var errs []string
		if zeros && fr.SizeAtCut > f.synced {
			if err := zeroRange(f.fd, f.synced, fr.SizeAtCut); err != nil {
				errs = append(errs, "zero: "+err.Error())
			}
			fr.Zeroed = append(fr.Zeroed, [2]int64{f.synced, fr.SizeAtCut})
		} else if fr.SizeAtCut != f.synced {
			if err := unix.Ftruncate(f.fd, f.synced); err != nil {
				errs = append(errs, "truncate: "+err.Error())
			}
		}
		for _, p := range f.pre.ps {
			if p.data == nil {
				// Punch a hole where zeros were (keeps index files sparse).
				if unix.Fallocate(f.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, p.off, p.n) == nil {
					continue
				}
				if _, err := unix.Pwrite(f.fd, make([]byte, p.n), p.off); err != nil {
					errs = append(errs, fmt.Sprintf("restore [%d,%d): %v", p.off, p.end(), err))
				}
				continue
			}
			if _, err := unix.Pwrite(f.fd, p.data, p.off); err != nil {
				errs = append(errs, fmt.Sprintf("restore [%d,%d): %v", p.off, p.end(), err))
			}
		}
		fr.Error = strings.Join(errs, "; ")
		if fr.Error == "" && len(fr.Lost) == 0 && len(fr.Restored) == 0 && len(fr.Untruncated) == 0 {
			continue
		}
		for _, r := range fr.Lost {
			mr.LostBytes += r[1] - r[0]
		}
		for _, r := range fr.Restored {
			mr.RestoredBytes += r[1] - r[0]
		}
		mr.Files = append(mr.Files, *fr)
	}
	for _, it := range items {
		unix.Close(it.f.fd)
		it.f.fd = -1
		it.f.mu.Unlock()
	}
	j.files = map[devino]*fileState{}
	sort.Slice(mr.Files, func(a, b int) bool { return mr.Files[a].Path < mr.Files[b].Path })

	// Entries, newest first.
	for i := len(j.ops) - 1; i >= 0; i-- {
		op := j.ops[i]
		er := entryReport{Op: op.op, Path: op.path, To: op.to, Undo: j.undo(op)}
		mr.Entries = append(mr.Entries, er)
		j.releaseDirLocked(op.dir1)
		j.releaseDirLocked(op.dir2)
		j.ops[i] = nil
	}
	j.ops = nil
	// Whatever is left in the graveyard was deleted durably before the cut.
	j.emptyGrave()
}

// zeroRange makes [a, b) of the file read as zeros, its size unchanged: a punched hole,
// or written zeros where the backing file system cannot punch.
func zeroRange(fd int, a, b int64) error {
	if unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, a, b-a) == nil {
		return nil
	}
	buf := make([]byte, min(b-a, 1<<20))
	for off := a; off < b; off += int64(len(buf)) {
		n := min(int64(len(buf)), b-off)
		if _, err := unix.Pwrite(fd, buf[:n], off); err != nil {
			return err
		}
	}
	return nil
}

// undo reverts one entry op and says how (or why not).
func (j *journal) undo(op *entryOp) string {
	fail := func(what string, err error) string { return "failed: " + what + ": " + err.Error() }
	switch op.op {
	case "create", "mknod", "symlink", "link", "mkdir":
		var st unix.Stat_t
		if err := unix.Fstatat(op.dir1.fd, op.name1, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fail("stat", err)
		}
		if st.Ino != op.ino {
			return "failed: the name now holds another inode"
		}
		if op.op != "mkdir" {
			if err := unix.Unlinkat(op.dir1.fd, op.name1, 0); err != nil {
				return fail("unlink", err)
			}
			return "removed"
		}
		err := unix.Unlinkat(op.dir1.fd, op.name1, unix.AT_REMOVEDIR)
		if err == unix.ENOTEMPTY || err == unix.EEXIST {
			// Entries made durable inside a directory whose own entry was not: all lost.
			p, lerr := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", op.dir1.fd))
			if lerr != nil {
				return fail("rmdir", err)
			}
			if err := os.RemoveAll(filepath.Join(p, op.name1)); err != nil {
				return fail("remove", err)
			}
			return "removed with its contents"
		}
		if err != nil {
			return fail("rmdir", err)
		}
		return "removed"
	case "unlink", "rmdir":
		if err := unix.Renameat2(j.graveFd, op.grave, op.dir1.fd, op.name1, unix.RENAME_NOREPLACE); err != nil {
			return fail("restore", err)
		}
		return "restored"
	case "rename":
		if err := unix.Renameat2(op.dir2.fd, op.name2, op.dir1.fd, op.name1, unix.RENAME_NOREPLACE); err != nil {
			return fail("rename back", err)
		}
		if op.grave == "" {
			return "renamed back"
		}
		if err := unix.Renameat2(j.graveFd, op.grave, op.dir2.fd, op.name2, unix.RENAME_NOREPLACE); err != nil {
			return fail("renamed back; restore the replaced target", err)
		}
		return "renamed back, replaced target restored"
	case "exchange":
		if err := unix.Renameat2(op.dir1.fd, op.name1, op.dir2.fd, op.name2, unix.RENAME_EXCHANGE); err != nil {
			return fail("exchange back", err)
		}
		return "exchanged back"
	}
	return "failed: unknown op"
}

// emptyGrave deletes everything in the graveyard.
func (j *journal) emptyGrave() {
	ents, err := os.ReadDir(j.grave)
	if err != nil {
		log.Printf("plfs: graveyard %s: %v", j.grave, err)
		return
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(j.grave, e.Name())); err != nil {
			log.Printf("plfs: graveyard: %v", err)
		}
	}
}
