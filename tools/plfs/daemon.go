package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// tick is the write-back ticker's period.
const tick = 250 * time.Millisecond

type pair struct{ backing, mountpoint, grave string }

type config struct {
	pairs   []pair
	control string
	// writeback: < 0 unset (only fsync makes data durable); 0: every change is durable at
	// once (nothing is ever undone); > 0: undo items older than this are forgotten.
	writeback         time.Duration
	unsafePassthrough bool // tests only: keep go-fuse's passthrough (the self-test must refuse)
	debug             bool
}

type mount struct {
	d          *daemon
	j          *journal
	backing    string
	mountpoint string
	grave      string
	root       *node
	server     *fuse.Server
	writes     atomic.Uint64
	fsyncs     atomic.Uint64
	fsyncdirs  atomic.Uint64
}

type daemon struct {
	cfg config

	// gate: every FUSE request that reads or changes the backing store holds it shared;
	// the cut holds it exclusively. Once frozen, requests wait until the daemon shuts
	// down and then fail with EIO.
	gate     sync.RWMutex
	frozen   bool
	shutdown chan struct{}
	shutOnce sync.Once

	seq    atomic.Uint64
	mounts []*mount
	ln     net.Listener

	cutFault  string
	cutReport []byte
}

func (d *daemon) enter() bool {
	d.gate.RLock()
	if d.frozen {
		d.gate.RUnlock()
		<-d.shutdown
		return false
	}
	return true
}

func (d *daemon) leave() { d.gate.RUnlock() }

// start mounts every pair, self-tests each mount and opens the control socket.
func start(cfg config) (*daemon, error) {
	d := &daemon{cfg: cfg, shutdown: make(chan struct{})}
	for i, p := range cfg.pairs {
		m, err := d.mountOne(i, p)
		if err != nil {
			d.close()
			return nil, err
		}
		d.mounts = append(d.mounts, m)
	}
	if cfg.writeback > 0 {
		go d.writebackLoop()
	}
	if cfg.control != "" {
		if err := d.listen(); err != nil {
			d.close()
			return nil, err
		}
	}
	return d, nil
}

func (d *daemon) mountOne(i int, p pair) (*mount, error) {
	backing, err := filepath.Abs(p.backing)
	if err != nil {
		return nil, err
	}
	mp, err := filepath.Abs(p.mountpoint)
	if err != nil {
		return nil, err
	}
	var bst, gst unix.Stat_t
	if err := unix.Stat(backing, &bst); err != nil || bst.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("backing %s: not a directory (%v)", backing, err)
	}
	grave := p.grave
	if grave == "" {
		grave = filepath.Join(filepath.Dir(backing), ".plfs-grave-"+filepath.Base(backing))
	}
	if grave, err = filepath.Abs(grave); err != nil {
		return nil, err
	}
	if grave == backing || strings.HasPrefix(grave+"/", backing+"/") {
		return nil, fmt.Errorf("graveyard %s: must not be inside the backing dir %s", grave, backing)
	}
	if err := os.MkdirAll(grave, 0o700); err != nil {
		return nil, err
	}
	if err := unix.Stat(grave, &gst); err != nil {
		return nil, err
	}
	if gst.Dev != bst.Dev {
		return nil, fmt.Errorf("graveyard %s: not on the file system of %s (moves must be renames)", grave, backing)
	}
	m := &mount{d: d, backing: backing, mountpoint: mp, grave: grave}
	if m.j, err = newJournal(d, backing, grave, d.cfg.writeback != 0); err != nil {
		return nil, err
	}
	m.j.emptyGrave() // left by an earlier run that ended without a cut: durable deletes

	lr := &fs.LoopbackRoot{Path: backing, Dev: uint64(bst.Dev)}
	lr.NewNode = func(r *fs.LoopbackRoot, parent *fs.Inode, name string, st *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: r}, m: m}
	}
	m.root = &node{LoopbackNode: fs.LoopbackNode{RootData: lr}, m: m}
	lr.RootNode = m.root

	opts := &fs.Options{MountOptions: fuse.MountOptions{
		AllowOther:        true,
		DirectMountStrict: true, // mount(2) as root: no fusermount
		FsName:            backing,
		Name:              "plfs",
		Options:           []string{"default_permissions"},
		// Cached write-through: go-fuse asks for neither writeback_cache nor direct_io.
		// Passthrough is off twice: the capability here, and file handles without
		// PassthroughFd (node.go).
		DisabledCapabilities: fuse.CAP_PASSTHROUGH,
		Debug:                d.cfg.debug,
	}}
	if d.cfg.unsafePassthrough {
		opts.DisabledCapabilities = 0
	}
	server, err := fs.Mount(mp, m.root, opts)
	if err != nil {
		return nil, fmt.Errorf("mount %s on %s: %w", backing, mp, err)
	}
	m.server = server
	if err := m.selfTest(i); err != nil {
		m.unmount()
		return nil, err
	}
	log.Printf("plfs: mounted %s on %s (graveyard %s)", backing, mp, grave)
	return m, nil
}

// selfTest writes through the mount and checks that the daemon saw (and journalled)
// the write, that it reached the backing file, and that fsync and FSYNCDIR leave
// nothing behind. With FUSE passthrough on, the write would bypass the daemon.
func (m *mount) selfTest(i int) (err error) {
	name := fmt.Sprintf(".plfs-selftest-%d-%d", os.Getpid(), i)
	p := filepath.Join(m.mountpoint, name)
	payload := []byte("plfs self-test: every write must reach the daemon\n")
	defer func() {
		os.Remove(filepath.Join(m.backing, name))
		m.j.mu.Lock()
		m.j.files = map[devino]*fileState{}
		m.j.ops = nil
		m.j.mu.Unlock()
		m.j.emptyGrave()
	}()
	w0 := m.writes.Load()
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("self-test on %s: %w", m.mountpoint, err)
	}
	_, err = f.Write(payload)
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if err != nil {
		return fmt.Errorf("self-test on %s: %w", m.mountpoint, err)
	}
	if m.writes.Load() == w0 {
		return fmt.Errorf("self-test on %s: a write through the mount did not reach plfs "+
			"(FUSE passthrough?): refusing to serve, nothing would be journalled", m.mountpoint)
	}
	got, err := os.ReadFile(filepath.Join(m.backing, name))
	if err != nil || !bytes.Equal(got, payload) {
		return fmt.Errorf("self-test on %s: the backing file does not hold what was written (%v)", m.mountpoint, err)
	}
	if m.j.enabled {
		m.j.mu.Lock()
		nfiles, nops := len(m.j.files), len(m.j.ops)
		m.j.mu.Unlock()
		if nfiles != 0 || nops != 1 {
			return fmt.Errorf("self-test on %s: journal has %d files (want 0 after fsync) and %d entry ops (want 1 create)", m.mountpoint, nfiles, nops)
		}
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("self-test on %s: %w", m.mountpoint, err)
	}
	dir, err := os.Open(m.mountpoint)
	if err == nil {
		err = dir.Sync()
		dir.Close()
	}
	if err != nil {
		return fmt.Errorf("self-test on %s: fsync of the root dir: %w", m.mountpoint, err)
	}
	if m.j.enabled {
		m.j.mu.Lock()
		nops := len(m.j.ops)
		m.j.mu.Unlock()
		if nops != 0 {
			return fmt.Errorf("self-test on %s: %d entry ops left after FSYNCDIR", m.mountpoint, nops)
		}
	}
	return nil
}

func (m *mount) unmount() {
	if m.server == nil {
		return
	}
	if err := m.server.Unmount(); err != nil {
		log.Printf("plfs: unmount %s: %v; detaching", m.mountpoint, err)
		if err := unix.Unmount(m.mountpoint, unix.MNT_DETACH); err != nil {
			log.Printf("plfs: detach %s: %v", m.mountpoint, err)
		}
	}
	m.server = nil
}

// close releases frozen requests (EIO), closes the control socket and unmounts.
func (d *daemon) close() {
	d.shutOnce.Do(func() {
		close(d.shutdown)
		if d.ln != nil {
			d.ln.Close()
			os.Remove(d.cfg.control)
		}
		for _, m := range d.mounts {
			m.unmount()
		}
	})
}

func (d *daemon) writebackLoop() {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-d.shutdown:
			return
		case <-t.C:
		}
		d.gate.RLock()
		if !d.frozen {
			cutoff := time.Now().Add(-d.cfg.writeback)
			for _, m := range d.mounts {
				m.j.writeback(cutoff)
			}
		}
		d.gate.RUnlock()
	}
}

// ---------------------------------------------------------------- cut and status

type report struct {
	FaultID    string   `json:"fault_id"`
	CutAt      string   `json:"cut_at"`
	CutMs      float64  `json:"cut_ms"`
	WritebackS *float64 `json:"writeback_s"`
	// DurableBeforeMs: changes before it were kept (the cut's --durable-before-ms).
	DurableBeforeMs *int64 `json:"durable_before_ms,omitempty"`
	// UnsyncedTail: "zeros" when the cut kept unsynced growth as zeros (ctlRequest).
	UnsyncedTail string        `json:"unsynced_tail,omitempty"`
	Mounts       []mountReport `json:"mounts"`
}

// What a cut makes of a file's unsynced growth (ctlRequest.UnsyncedTail).
const (
	tailDrop  = "drop"
	tailZeros = "zeros"
)

func (d *daemon) writebackS() *float64 {
	if d.cfg.writeback < 0 {
		return nil
	}
	s := d.cfg.writeback.Seconds()
	return &s
}

// cut freezes the daemon and rolls every mount back to its durable state, atomically
// with respect to every FUSE request. A second cut with the same fault id returns the
// first report.
func (d *daemon) cut(faultID, reportPath string, writebackS *float64, durableBeforeMs *int64, zeros bool) ([]byte, error) {
	if faultID == "" {
		return nil, fmt.Errorf("cut: a fault id is required")
	}
	d.gate.Lock()
	defer d.gate.Unlock()
	if d.frozen {
		if faultID == d.cutFault {
			return d.cutReport, nil
		}
		return nil, fmt.Errorf("cut: already cut by fault %q", d.cutFault)
	}
	d.frozen = true
	at := time.Now()
	wb := d.writebackS()
	if writebackS != nil { // every change is timed (unless the mount runs --writeback-s 0)
		wb = writebackS
		cutoff := at.Add(-time.Duration(*writebackS * float64(time.Second)))
		for _, m := range d.mounts {
			m.j.writeback(cutoff)
		}
	}
	if durableBeforeMs != nil {
		cutoff := time.UnixMilli(*durableBeforeMs)
		for _, m := range d.mounts {
			m.j.writeback(cutoff)
		}
	}
	rep := report{FaultID: faultID, CutAt: at.UTC().Format(time.RFC3339Nano), WritebackS: wb, DurableBeforeMs: durableBeforeMs, Mounts: []mountReport{}}
	if zeros {
		rep.UnsyncedTail = tailZeros
	}
	for _, m := range d.mounts {
		mr := mountReport{Backing: m.backing, Mountpoint: m.mountpoint}
		m.j.cut(&mr, zeros)
		rep.Mounts = append(rep.Mounts, mr)
	}
	rep.CutMs = float64(time.Since(at).Microseconds()) / 1000
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	data = append(data, '\n')
	d.cutFault, d.cutReport = faultID, data
	for _, mr := range rep.Mounts {
		log.Printf("plfs: cut %s: %s: %d files rolled back (%d bytes lost, %d restored), %d entry ops undone",
			faultID, mr.Backing, len(mr.Files), mr.LostBytes, mr.RestoredBytes, len(mr.Entries))
	}
	if reportPath != "" {
		if err := writeFileAtomic(reportPath, data); err != nil {
			return data, fmt.Errorf("cut done, but the report %s: %w", reportPath, err)
		}
	}
	return data, nil
}

type statusOut struct {
	Frozen     bool          `json:"frozen"`
	FaultID    string        `json:"fault_id,omitempty"`
	WritebackS *float64      `json:"writeback_s"`
	Mounts     []mountStatus `json:"mounts"`
}

func (d *daemon) status() ([]byte, error) {
	d.gate.RLock()
	defer d.gate.RUnlock()
	out := statusOut{Frozen: d.frozen, FaultID: d.cutFault, WritebackS: d.writebackS(), Mounts: []mountStatus{}}
	for _, m := range d.mounts {
		ms := mountStatus{Backing: m.backing, Mountpoint: m.mountpoint, Grave: m.grave, Writes: m.writes.Load()}
		m.j.status(&ms)
		out.Mounts = append(out.Mounts, ms)
	}
	data, err := json.MarshalIndent(out, "", "  ")
	return append(data, '\n'), err
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// ---------------------------------------------------------------- control socket

// The control protocol: one JSON request line per connection, one JSON answer line.
//
//	{"cmd":"cut","fault_id":"F","report":"/path/report.json"}
//	{"cmd":"status"}
//
// answer: {"ok":true,"result":{...}} or {"ok":false,"error":"..."}
type ctlRequest struct {
	Cmd     string `json:"cmd"`
	FaultID string `json:"fault_id,omitempty"`
	Report  string `json:"report,omitempty"`
	// WritebackS, on a cut: what the kernel would have written back by itself this many
	// seconds before the cut is kept (the power loss's own setting, over the mount's).
	WritebackS *float64 `json:"writeback_s,omitempty"`
	// DurableBeforeMs, on a cut: every change made before this instant (ms since the
	// epoch) is kept — what a node wrote before the experiment (its format, its start-up) is
	// on disk by the time of a real power cut.
	DurableBeforeMs *int64 `json:"durable_before_ms,omitempty"`
	// Exit, on a cut: the daemon exits once it has answered, so the kernel aborts the FUSE
	// connection and every request still to come fails at once. The power is off: a frozen
	// daemon would instead hold the dying JVM's last flushes (the dirty pages of its mmapped
	// indexes, written back at close) for ever, and the container could not be killed.
	Exit bool `json:"exit,omitempty"`
	// UnsyncedTail, on a cut: what a file's unsynced growth becomes. "" or "drop": gone,
	// the file back at its synced size (lazyfs). "zeros": the size stays and the bytes read
	// as zeros - the inode's new size reached the disk, its data never did (XFS, or ext4
	// data=writeback, after a crash: the "NULL bytes in a renamed file" failure).
	UnsyncedTail string `json:"unsynced_tail,omitempty"`
}

type ctlAnswer struct {
	OK     bool            `json:"ok"`
	Error  string          `json:"error,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

func (d *daemon) listen() error {
	os.Remove(d.cfg.control)
	if err := os.MkdirAll(filepath.Dir(d.cfg.control), 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("unix", d.cfg.control)
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	os.Chmod(d.cfg.control, 0o600)
	d.ln = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go d.serveCtl(c)
		}
	}()
	return nil
}

func (d *daemon) serveCtl(c net.Conn) {
	defer c.Close()
	line, err := bufio.NewReader(c).ReadBytes('\n')
	var ans ctlAnswer
	var req ctlRequest
	if err == nil || len(line) > 0 {
		err = json.Unmarshal(line, &req)
	}
	var res []byte
	if err == nil {
		switch req.Cmd {
		case "cut":
			if req.UnsyncedTail != "" && req.UnsyncedTail != tailDrop && req.UnsyncedTail != tailZeros {
				err = fmt.Errorf("cut: unsynced_tail: want %q or %q, got %q", tailDrop, tailZeros, req.UnsyncedTail)
				break
			}
			res, err = d.cut(req.FaultID, req.Report, req.WritebackS, req.DurableBeforeMs, req.UnsyncedTail == tailZeros)
		case "status":
			res, err = d.status()
		default:
			err = fmt.Errorf("unknown command %q", req.Cmd)
		}
	}
	ans.OK = err == nil
	if err != nil {
		ans.Error = err.Error()
	}
	if res != nil {
		ans.Result = json.RawMessage(res)
	}
	out, _ := json.Marshal(ans)
	c.Write(append(out, '\n'))
	if req.Cmd == "cut" && req.Exit && ans.OK {
		c.Close()
		log.Printf("plfs: cut %s: exiting (the FUSE connection goes with it)", req.FaultID)
		os.Exit(0)
	}
}

// ctlCall sends one request to the daemon at sock.
func ctlCall(sock string, req ctlRequest) (json.RawMessage, error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	var ans ctlAnswer
	if err := json.Unmarshal(line, &ans); err != nil {
		return nil, fmt.Errorf("control socket: bad answer: %w", err)
	}
	if !ans.OK {
		return ans.Result, fmt.Errorf("%s", ans.Error)
	}
	return ans.Result, nil
}
