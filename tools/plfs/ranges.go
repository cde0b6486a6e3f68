package main

import (
	"sort"
	"time"
)

// piece is the pre-image of one byte range of a file: the bytes it held at the last
// fsync, saved just before the range was first changed since. data is nil when every
// byte was zero (index files are mostly holes), so those cost no memory.
type piece struct {
	off  int64
	n    int64
	data []byte
	t    time.Time
}

func (p piece) end() int64 { return p.off + p.n }

// preimages is a sparse, sorted set of non-overlapping pieces.
type preimages struct {
	ps []piece
}

// gaps returns the sub-ranges of [a, b) that no piece covers yet.
func (s *preimages) gaps(a, b int64) [][2]int64 {
	var out [][2]int64
	if a >= b {
		return nil
	}
	// First piece that ends after a.
	i := sort.Search(len(s.ps), func(i int) bool { return s.ps[i].end() > a })
	cur := a
	for ; i < len(s.ps) && s.ps[i].off < b; i++ {
		if s.ps[i].off > cur {
			out = append(out, [2]int64{cur, s.ps[i].off})
		}
		if e := s.ps[i].end(); e > cur {
			cur = e
		}
	}
	if cur < b {
		out = append(out, [2]int64{cur, b})
	}
	return out
}

// add inserts a piece that overlaps no existing one (a gap from gaps).
func (s *preimages) add(p piece) {
	i := sort.Search(len(s.ps), func(i int) bool { return s.ps[i].off >= p.off })
	s.ps = append(s.ps, piece{})
	copy(s.ps[i+1:], s.ps[i:])
	s.ps[i] = p
}

// forgetUpTo drops the pieces saved at or before cutoff.
func (s *preimages) forgetUpTo(cutoff time.Time) {
	kept := s.ps[:0]
	for _, p := range s.ps {
		if p.t.After(cutoff) {
			kept = append(kept, p)
		}
	}
	for i := len(kept); i < len(s.ps); i++ {
		s.ps[i] = piece{}
	}
	s.ps = kept
}

// ranges returns the covered ranges, adjacent pieces merged.
func (s *preimages) ranges() [][2]int64 {
	out := [][2]int64{}
	for _, p := range s.ps {
		if n := len(out); n > 0 && out[n-1][1] == p.off {
			out[n-1][1] = p.end()
			continue
		}
		out = append(out, [2]int64{p.off, p.end()})
	}
	return out
}

func (s *preimages) bytes() int64 {
	var n int64
	for _, p := range s.ps {
		n += p.n
	}
	return n
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
