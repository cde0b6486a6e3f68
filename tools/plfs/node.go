package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is a loopback node whose every request passes the daemon's gate, and whose
// changes go through the mount's undo journal. Read-only requests reuse go-fuse's
// LoopbackNode.
type node struct {
	fs.LoopbackNode
	m *mount
}

func (n *node) rel() string  { return n.Path(n.m.root.EmbeddedInode()) }
func (n *node) full() string { return filepath.Join(n.m.backing, n.rel()) }
func (n *node) relChild(name string) string {
	if r := n.rel(); r != "" {
		return r + "/" + name
	}
	return name
}

// ---------------------------------------------------------------- read-only requests

var _ = (fs.NodeStatfser)((*node)(nil))

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	if !n.m.d.enter() {
		return syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Statfs(ctx, out)
}

var _ = (fs.NodeLookuper)((*node)(nil))

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !n.m.d.enter() {
		return nil, syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Lookup(ctx, name, out)
}

func inner(f fs.FileHandle) fs.FileHandle {
	if h, ok := f.(*file); ok {
		return h.lf
	}
	if h, ok := f.(*passthroughFile); ok {
		return h.lf
	}
	return f
}

var _ = (fs.NodeGetattrer)((*node)(nil))

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if !n.m.d.enter() {
		return syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Getattr(ctx, inner(f), out)
}

var _ = (fs.NodeStatxer)((*node)(nil))

func (n *node) Statx(ctx context.Context, f fs.FileHandle, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	if !n.m.d.enter() {
		return syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Statx(ctx, inner(f), flags, mask, out)
}

var _ = (fs.NodeReadlinker)((*node)(nil))

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	if !n.m.d.enter() {
		return nil, syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Readlink(ctx)
}

var _ = (fs.NodeGetxattrer)((*node)(nil))

func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if !n.m.d.enter() {
		return 0, syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Getxattr(ctx, attr, dest)
}

var _ = (fs.NodeListxattrer)((*node)(nil))

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	if !n.m.d.enter() {
		return 0, syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Listxattr(ctx, dest)
}

// Extended attributes are metadata the undo journal does not cover (Kafka sets none).
var _ = (fs.NodeSetxattrer)((*node)(nil))

func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if !n.m.d.enter() {
		return syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Setxattr(ctx, attr, data, flags)
}

var _ = (fs.NodeRemovexattrer)((*node)(nil))

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if !n.m.d.enter() {
		return syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Removexattr(ctx, attr)
}

var _ = (fs.NodeReaddirer)((*node)(nil))

func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	if !n.m.d.enter() {
		return nil, syscall.EIO
	}
	defer n.m.d.leave()
	return n.LoopbackNode.Readdir(ctx)
}

// CopyFileRange: ENOSYS makes the kernel fall back to reads and writes, which the
// journal sees.
var _ = (fs.NodeCopyFileRanger)((*node)(nil))

func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut uint64, l uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

// Tmpfile (O_TMPFILE) is refused: its later linkat would need its own journal entry.
var _ = (fs.NodeTmpfiler)((*node)(nil))

func (n *node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

// ---------------------------------------------------------------- files

func (n *node) wrap(fh fs.FileHandle, rel string) fs.FileHandle {
	lf := fh.(*fs.LoopbackFile)
	fd, _ := lf.PassthroughFd() // only to learn the descriptor; never handed to the kernel
	h := &file{lf: lf, fd: fd, n: n, rel: rel}
	if n.m.d.cfg.unsafePassthrough {
		return &passthroughFile{h}
	}
	return h
}

var _ = (fs.NodeOpener)((*node)(nil))

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if !n.m.d.enter() {
		return nil, 0, syscall.EIO
	}
	defer n.m.d.leave()
	// The kernel sends O_TRUNC as a SETATTR (no atomic_o_trunc); strip it anyway and
	// truncate through the journal.
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags&^syscall.O_TRUNC)
	if errno != 0 {
		return nil, 0, errno
	}
	h := n.wrap(fh, n.rel())
	if flags&syscall.O_TRUNC != 0 && flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		if err := n.m.j.truncate(fdOf(inner(h)), n.rel(), 0); err != nil {
			inner(h).(*fs.LoopbackFile).Release(ctx)
			return nil, 0, fs.ToErrno(err)
		}
	}
	return h, fl, 0
}

var _ = (fs.NodeCreater)((*node)(nil))

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if !n.m.d.enter() {
		return nil, nil, 0, syscall.EIO
	}
	defer n.m.d.leave()
	j := n.m.j
	var (
		ch      *fs.Inode
		h       fs.FileHandle
		fl      uint32
		existed bool
	)
	errno := func() syscall.Errno {
		j.mu.Lock()
		defer j.mu.Unlock()
		var st unix.Stat_t
		existed = unix.Lstat(filepath.Join(n.full(), name), &st) == nil
		var ref *dirRef
		if !existed && j.enabled {
			r, err := j.dirRefLocked(n.full())
			if err != nil {
				return fs.ToErrno(err)
			}
			ref = r
		}
		var fh fs.FileHandle
		var errno syscall.Errno
		ch, fh, fl, errno = n.LoopbackNode.Create(ctx, name, flags&^syscall.O_TRUNC, mode, out)
		if errno != 0 {
			j.releaseDirLocked(ref)
			return errno
		}
		h = n.wrap(fh, n.relChild(name))
		if ref != nil {
			if err := unix.Fstat(fdOf(inner(h)), &st); err != nil {
				j.releaseDirLocked(ref)
				return 0
			}
			j.recordLocked(&entryOp{op: "create", dir1: ref, name1: name, ino: st.Ino, path: n.relChild(name)})
		}
		return 0
	}()
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if existed && flags&syscall.O_TRUNC != 0 {
		if err := j.truncate(fdOf(inner(h)), n.relChild(name), 0); err != nil {
			inner(h).(*fs.LoopbackFile).Release(ctx)
			return nil, nil, 0, fs.ToErrno(err)
		}
	}
	return ch, h, fl, 0
}

// fdOf: the descriptor of a LoopbackFile, which owns it until Release.
func fdOf(f fs.FileHandle) int {
	fd, _ := f.(*fs.LoopbackFile).PassthroughFd()
	return fd
}

var _ = (fs.NodeSetattrer)((*node)(nil))

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if !n.m.d.enter() {
		return syscall.EIO
	}
	defer n.m.d.leave()
	lf := inner(f)
	if sz, ok := in.GetSize(); ok {
		fd := -1
		if l, ok := lf.(*fs.LoopbackFile); ok && l != nil {
			fd = fdOf(l)
		} else {
			pfd, err := unix.Open(n.full(), unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return fs.ToErrno(err)
			}
			defer unix.Close(pfd)
			fd = pfd
		}
		if err := n.m.j.truncate(fd, n.rel(), int64(sz)); err != nil {
			return fs.ToErrno(err)
		}
		rest := *in
		rest.Valid &^= fuse.FATTR_SIZE
		in = &rest
	}
	return n.LoopbackNode.Setattr(ctx, lf, in, out)
}

// file is a file handle that journals writes, truncates and fsyncs. It wraps go-fuse's
// LoopbackFile WITHOUT embedding it: LoopbackFile implements FilePassthroughFder, and
// go-fuse would then register the backing file with the kernel (FUSE passthrough, as
// root on kernels >= 6.9): reads and writes would bypass plfs and nothing would be
// journalled.
type file struct {
	lf  *fs.LoopbackFile
	fd  int
	n   *node
	rel string
}

// passthroughFile is the trap, kept for the self-test's test only (--unsafe-passthrough).
type passthroughFile struct{ *file }

func (p *passthroughFile) PassthroughFd() (int, bool) { return p.lf.PassthroughFd() }

var _ = (fs.FileReader)((*file)(nil))
var _ = (fs.FileWriter)((*file)(nil))
var _ = (fs.FileReleaser)((*file)(nil))
var _ = (fs.FileFlusher)((*file)(nil))
var _ = (fs.FileFsyncer)((*file)(nil))
var _ = (fs.FileGetattrer)((*file)(nil))
var _ = (fs.FileStatxer)((*file)(nil))
var _ = (fs.FileLseeker)((*file)(nil))
var _ = (fs.FileAllocater)((*file)(nil))

func (h *file) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if !h.n.m.d.enter() {
		return nil, syscall.EIO
	}
	defer h.n.m.d.leave()
	return h.lf.Read(ctx, buf, off)
}

func (h *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if !h.n.m.d.enter() {
		return 0, syscall.EIO
	}
	defer h.n.m.d.leave()
	h.n.m.writes.Add(1)
	n, err := h.n.m.j.write(h.fd, h.rel, data, off)
	return uint32(max(n, 0)), fs.ToErrno(err)
}

func (h *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if !h.n.m.d.enter() {
		return syscall.EIO
	}
	defer h.n.m.d.leave()
	h.n.m.fsyncs.Add(1)
	return fs.ToErrno(h.n.m.j.fsync(h.fd))
}

func (h *file) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	if !h.n.m.d.enter() {
		return syscall.EIO
	}
	defer h.n.m.d.leave()
	return fs.ToErrno(h.n.m.j.allocate(h.fd, h.rel, int64(off), int64(size), mode))
}

// Release, Flush and the attribute reads change nothing in the backing store; they pass
// even after a cut, so closing descriptors never hangs.
func (h *file) Release(ctx context.Context) syscall.Errno { return h.lf.Release(ctx) }
func (h *file) Flush(ctx context.Context) syscall.Errno   { return h.lf.Flush(ctx) }
func (h *file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return h.lf.Getattr(ctx, out)
}
func (h *file) Statx(ctx context.Context, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	return h.lf.Statx(ctx, flags, mask, out)
}
func (h *file) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return h.lf.Lseek(ctx, off, whence)
}

// ---------------------------------------------------------------- directories

var _ = (fs.NodeOpendirHandler)((*node)(nil))

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if !n.m.d.enter() {
		return nil, 0, syscall.EIO
	}
	defer n.m.d.leave()
	fd, err := unix.Open(n.full(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, 0, fs.ToErrno(err)
	}
	ds, errno := fs.NewLoopbackDirStreamFd(fd)
	if errno != 0 {
		unix.Close(fd)
		return nil, 0, errno
	}
	return &dirHandle{ds: ds, key: keyOf(&st), m: n.m}, 0, 0
}

type dirHandle struct {
	ds  fs.DirStream
	key devino
	m   *mount
}

var _ = (fs.FileReaddirenter)((*dirHandle)(nil))
var _ = (fs.FileSeekdirer)((*dirHandle)(nil))
var _ = (fs.FileReleasedirer)((*dirHandle)(nil))
var _ = (fs.FileFsyncdirer)((*dirHandle)(nil))

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if !d.m.d.enter() {
		return nil, syscall.EIO
	}
	defer d.m.d.leave()
	return d.ds.(fs.FileReaddirenter).Readdirent(ctx)
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if !d.m.d.enter() {
		return syscall.EIO
	}
	defer d.m.d.leave()
	return d.ds.(fs.FileSeekdirer).Seekdir(ctx, off)
}

func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	d.ds.(fs.FileReleasedirer).Releasedir(ctx, flags)
}

func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if !d.m.d.enter() {
		return syscall.EIO
	}
	defer d.m.d.leave()
	d.m.fsyncdirs.Add(1)
	d.m.j.fsyncDir(d.key)
	return 0
}

// ---------------------------------------------------------------- entries

// createLike runs make (a LoopbackNode method that makes name in n) and journals it.
func (n *node) createLike(op, name string, out *fuse.EntryOut, make func() (*fs.Inode, syscall.Errno)) (*fs.Inode, syscall.Errno) {
	if !n.m.d.enter() {
		return nil, syscall.EIO
	}
	defer n.m.d.leave()
	j := n.m.j
	if !j.enabled {
		return make()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	ref, err := j.dirRefLocked(n.full())
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	ch, errno := make()
	if errno != 0 {
		j.releaseDirLocked(ref)
		return nil, errno
	}
	var st unix.Stat_t
	if err := unix.Fstatat(ref.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		j.releaseDirLocked(ref)
		return ch, 0
	}
	j.recordLocked(&entryOp{op: op, dir1: ref, name1: name, ino: st.Ino, path: n.relChild(name)})
	return ch, 0
}

var _ = (fs.NodeMkdirer)((*node)(nil))

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.createLike("mkdir", name, out, func() (*fs.Inode, syscall.Errno) { return n.LoopbackNode.Mkdir(ctx, name, mode, out) })
}

var _ = (fs.NodeMknoder)((*node)(nil))

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.createLike("mknod", name, out, func() (*fs.Inode, syscall.Errno) { return n.LoopbackNode.Mknod(ctx, name, mode, rdev, out) })
}

var _ = (fs.NodeSymlinker)((*node)(nil))

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.createLike("symlink", name, out, func() (*fs.Inode, syscall.Errno) { return n.LoopbackNode.Symlink(ctx, target, name, out) })
}

var _ = (fs.NodeLinker)((*node)(nil))

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.createLike("link", name, out, func() (*fs.Inode, syscall.Errno) { return n.LoopbackNode.Link(ctx, target, name, out) })
}

// bury moves name (in the directory ref) to the graveyard instead of deleting it.
func (n *node) removeLike(op, name string) syscall.Errno {
	if !n.m.d.enter() {
		return syscall.EIO
	}
	defer n.m.d.leave()
	j := n.m.j
	p := filepath.Join(n.full(), name)
	if !j.enabled {
		if op == "rmdir" {
			return fs.ToErrno(unix.Rmdir(p))
		}
		return fs.ToErrno(unix.Unlink(p))
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fs.ToErrno(err)
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	switch {
	case op == "unlink" && isDir:
		return syscall.EISDIR
	case op == "rmdir" && !isDir:
		return syscall.ENOTDIR
	case op == "rmdir":
		if errno := emptyDir(p); errno != 0 {
			return errno
		}
	}
	ref, err := j.dirRefLocked(n.full())
	if err != nil {
		return fs.ToErrno(err)
	}
	g := j.graveName(name)
	if err := unix.Renameat(ref.fd, name, j.graveFd, g); err != nil {
		j.releaseDirLocked(ref)
		return fs.ToErrno(err)
	}
	j.recordLocked(&entryOp{op: op, dir1: ref, name1: name, grave: g, path: n.relChild(name)})
	return 0
}

func emptyDir(p string) syscall.Errno {
	d, err := os.Open(p)
	if err != nil {
		return fs.ToErrno(err)
	}
	defer d.Close()
	names, _ := d.Readdirnames(1)
	if len(names) > 0 {
		return syscall.ENOTEMPTY
	}
	return 0
}

var _ = (fs.NodeUnlinker)((*node)(nil))

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.removeLike("unlink", name)
}

var _ = (fs.NodeRmdirer)((*node)(nil))

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.removeLike("rmdir", name)
}

var _ = (fs.NodeRenamer)((*node)(nil))

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if !n.m.d.enter() {
		return syscall.EIO
	}
	defer n.m.d.leave()
	np, ok := newParent.(*node)
	if !ok || np.m != n.m {
		return syscall.EXDEV
	}
	if flags&unix.RENAME_WHITEOUT != 0 {
		return syscall.EINVAL
	}
	j := n.m.j
	p1, p2 := filepath.Join(n.full(), name), filepath.Join(np.full(), newName)
	if !j.enabled {
		return fs.ToErrno(unix.Renameat2(unix.AT_FDCWD, p1, unix.AT_FDCWD, p2, uint(flags)))
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var src, dst unix.Stat_t
	if err := unix.Lstat(p1, &src); err != nil {
		return fs.ToErrno(err)
	}
	dstErr := unix.Lstat(p2, &dst)
	exists := dstErr == nil
	if !exists && dstErr != unix.ENOENT {
		return fs.ToErrno(dstErr)
	}
	op := &entryOp{op: "rename", name1: name, name2: newName, path: n.relChild(name), to: np.relChild(newName)}
	if flags&unix.RENAME_EXCHANGE != 0 {
		if !exists {
			return syscall.ENOENT
		}
		op.op = "exchange"
	} else if exists {
		if flags&unix.RENAME_NOREPLACE != 0 {
			return syscall.EEXIST
		}
		if src.Dev == dst.Dev && src.Ino == dst.Ino {
			return 0 // POSIX: renaming a file onto one of its own links does nothing
		}
		srcDir := src.Mode&unix.S_IFMT == unix.S_IFDIR
		dstDir := dst.Mode&unix.S_IFMT == unix.S_IFDIR
		switch {
		case srcDir && !dstDir:
			return syscall.ENOTDIR
		case !srcDir && dstDir:
			return syscall.EISDIR
		case dstDir:
			if errno := emptyDir(p2); errno != 0 {
				return errno
			}
		}
	}
	r1, err := j.dirRefLocked(n.full())
	if err != nil {
		return fs.ToErrno(err)
	}
	r2, err := j.dirRefLocked(np.full())
	if err != nil {
		j.releaseDirLocked(r1)
		return fs.ToErrno(err)
	}
	op.dir1, op.dir2 = r1, r2
	fail := func(err error) syscall.Errno {
		j.releaseDirLocked(r1)
		j.releaseDirLocked(r2)
		return fs.ToErrno(err)
	}
	if op.op == "exchange" {
		if err := unix.Renameat2(r1.fd, name, r2.fd, newName, unix.RENAME_EXCHANGE); err != nil {
			return fail(err)
		}
	} else {
		if exists {
			op.grave = j.graveName(newName)
			if err := unix.Renameat(r2.fd, newName, j.graveFd, op.grave); err != nil {
				return fail(err)
			}
		}
		if err := unix.Renameat2(r1.fd, name, r2.fd, newName, unix.RENAME_NOREPLACE); err != nil {
			if exists {
				unix.Renameat(j.graveFd, op.grave, r2.fd, newName)
			}
			return fail(err)
		}
	}
	j.recordLocked(op) // holds one reference for dir1 and one for dir2, even if the same

	return 0
}
