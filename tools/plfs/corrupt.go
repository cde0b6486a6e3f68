package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

// segmentName: a Kafka log segment, its base offset as 20 digits.
var segmentName = regexp.MustCompile(`^[0-9]{20}\.log$`)

type corruption struct {
	Offset int64 `json:"offset"`
	Old    int   `json:"old"`
	New    int   `json:"new"`
}

type corruptResult struct {
	Dir          string       `json:"dir"`
	File         string       `json:"file"`
	Mode         string       `json:"mode"`
	Seed         uint64       `json:"seed"`
	Bytes        int64        `json:"bytes"`
	WithinTail   int64        `json:"within_tail,omitempty"`
	SizeBefore   int64        `json:"size_before"`
	SizeAfter    int64        `json:"size_after"`
	Flips        []corruption `json:"flips,omitempty"`
	Removed      []int64      `json:"removed,omitempty"` // truncate: [from, to)
	SkippedEmpty []string     `json:"skipped_empty,omitempty"`
	Error        string       `json:"error,omitempty"`
}

// splitmix64: a tiny, fully specified generator, so a seed gives the same corruption on
// every platform and Go version (and could be replayed outside Go).
type splitmix64 struct{ s uint64 }

func (r *splitmix64) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a uniform number in [0, n) (rejection sampling, n > 0).
func (r *splitmix64) below(n uint64) uint64 {
	limit := ^uint64(0) - (^uint64(0) % n)
	for {
		if v := r.next(); v < limit {
			return v % n
		}
	}
}

// newestSegment: the non-empty segment with the highest base offset; the empty ones
// above it (a freshly rolled active segment) are listed.
func newestSegment(dir string) (string, []string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && segmentName.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // fixed width: text order is offset order
	var skipped []string
	for _, n := range names {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			return "", nil, err
		}
		if st.Size() > 0 {
			return n, skipped, nil
		}
		skipped = append(skipped, n)
	}
	return "", skipped, fmt.Errorf("no non-empty segment (NNNNNNNNNNNNNNNNNNNN.log) in %s", dir)
}

func corrupt(dir, mode string, n int64, seed uint64, tail int64) (*corruptResult, error) {
	res := &corruptResult{Dir: dir, Mode: mode, Seed: seed, Bytes: n, WithinTail: tail}
	if mode != "bitflip" && mode != "truncate" {
		return res, fmt.Errorf("--mode: bitflip or truncate, got %q", mode)
	}
	if n <= 0 {
		return res, fmt.Errorf("--bytes must be > 0")
	}
	name, skipped, err := newestSegment(dir)
	res.SkippedEmpty = skipped
	if err != nil {
		return res, err
	}
	res.File = name
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return res, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return res, err
	}
	size := st.Size()
	res.SizeBefore, res.SizeAfter = size, size
	if mode == "truncate" {
		to := max(0, size-n)
		if err := f.Truncate(to); err != nil {
			return res, err
		}
		res.SizeAfter = to
		res.Removed = []int64{to, size}
		return res, f.Sync()
	}
	from := int64(0)
	if tail > 0 && tail < size {
		from = size - tail
	}
	span := size - from
	if n > span {
		return res, fmt.Errorf("cannot flip %d distinct bytes in a span of %d", n, span)
	}
	rng := &splitmix64{s: seed}
	chosen := map[int64]bool{}
	for int64(len(chosen)) < n {
		chosen[from+int64(rng.below(uint64(span)))] = true
	}
	offs := make([]int64, 0, n)
	for o := range chosen {
		offs = append(offs, o)
	}
	sort.Slice(offs, func(a, b int) bool { return offs[a] < offs[b] })
	// Bits are drawn in offset order, so the result depends on the seed alone.
	for _, o := range offs {
		var b [1]byte
		if _, err := f.ReadAt(b[:], o); err != nil {
			return res, err
		}
		nb := b[0] ^ (1 << rng.below(8))
		if _, err := f.WriteAt([]byte{nb}, o); err != nil {
			return res, err
		}
		res.Flips = append(res.Flips, corruption{Offset: o, Old: int(b[0]), New: int(nb)})
	}
	return res, f.Sync()
}

func cmdCorrupt(args []string) error {
	fl := flag.NewFlagSet("corrupt", flag.ContinueOnError)
	dir := fl.String("dir", "", "partition dir (backing, not mounted)")
	mode := fl.String("mode", "", "bitflip or truncate")
	n := fl.Int64("bytes", 0, "bytes to flip (one bit each) or to cut off the tail")
	seed := fl.Uint64("seed", 0, "seed")
	tail := fl.Int64("within-tail", 0, "bitflip: only within the last BYTES of the segment (0: anywhere)")
	result := fl.String("result", "", "write the JSON result here")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *result == "" {
		return fmt.Errorf("--dir and --result are required")
	}
	res, err := corrupt(*dir, *mode, *n, *seed, *tail)
	if err != nil {
		res.Error = err.Error()
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	data = append(data, '\n')
	if werr := writeFileAtomic(*result, data); werr != nil && err == nil {
		err = werr
	}
	os.Stdout.Write(data)
	return err
}

func absPath(p string) (string, error) { return filepath.Abs(p) }
