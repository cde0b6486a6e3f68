// plfs: a FUSE loopback file system that can simulate a power loss. See README.md.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var version = "dev"

const usage = `plfs: power-loss file system (FUSE) for kafka-chaos

  plfs mount --pair BACKING:MOUNTPOINT[:GRAVE] [--pair ...] --control SOCK
             [--writeback-s N] [--grave DIR] [--log FILE]
  plfs ctl --control SOCK cut --fault-id F [--report FILE]
  plfs ctl --control SOCK status
  plfs corrupt --dir PARTITION_DIR --mode bitflip|truncate --bytes N --seed S
               [--within-tail BYTES] --result FILE
  plfs version
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "mount":
		err = cmdMount(os.Args[2:])
	case "ctl":
		err = cmdCtl(os.Args[2:])
	case "corrupt":
		err = cmdCorrupt(os.Args[2:])
	case "version", "--version", "-version":
		fmt.Println(version)
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "plfs %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

type pairList []pair

func (p *pairList) String() string { return fmt.Sprint(*p) }
func (p *pairList) Set(v string) error {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return fmt.Errorf("want BACKING:MOUNTPOINT[:GRAVE], got %q", v)
	}
	pr := pair{backing: parts[0], mountpoint: parts[1]}
	if len(parts) == 3 {
		pr.grave = parts[2]
	}
	*p = append(*p, pr)
	return nil
}

func cmdMount(args []string) error {
	fl := flag.NewFlagSet("mount", flag.ContinueOnError)
	var pairs pairList
	fl.Var(&pairs, "pair", "BACKING:MOUNTPOINT[:GRAVE] (repeatable)")
	control := fl.String("control", "", "control socket path")
	wb := fl.String("writeback-s", "", "forget undo items older than N seconds (unset: only fsync makes data durable; 0: nothing is ever undone)")
	grave := fl.String("grave", "", "graveyard root on the backing file system (mount i uses DIR/i); default: BACKING's parent/.plfs-grave-<name>")
	logFile := fl.String("log", "", "log file (default stderr)")
	debug := fl.Bool("debug", false, "log every FUSE request")
	unsafe := fl.Bool("unsafe-passthrough", false, "tests only: leave FUSE passthrough on (the self-test then refuses to serve)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if len(pairs) == 0 || *control == "" {
		return fmt.Errorf("--pair and --control are required")
	}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		log.SetOutput(f)
	}
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	cfg := config{pairs: pairs, control: *control, writeback: -1, unsafePassthrough: *unsafe, debug: *debug}
	if *wb != "" {
		s, err := strconv.ParseFloat(*wb, 64)
		if err != nil || s < 0 {
			return fmt.Errorf("--writeback-s: want a number >= 0, got %q", *wb)
		}
		cfg.writeback = time.Duration(s * float64(time.Second))
	}
	if *grave != "" {
		for i := range cfg.pairs {
			if cfg.pairs[i].grave == "" {
				cfg.pairs[i].grave = fmt.Sprintf("%s/%d", strings.TrimRight(*grave, "/"), i)
			}
		}
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	d, err := start(cfg)
	if err != nil {
		return err
	}
	ready := fmt.Sprintf("plfs %s: ready: %d mount(s), control %s", version, len(d.mounts), cfg.control)
	log.Print(ready)
	fmt.Println(ready)
	s := <-sigs
	log.Printf("plfs: %v: unmounting", s)
	d.close()
	return nil
}

func cmdCtl(args []string) error {
	fl := flag.NewFlagSet("ctl", flag.ContinueOnError)
	control := fl.String("control", "", "control socket path")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *control == "" || fl.NArg() == 0 {
		return fmt.Errorf("usage: plfs ctl --control SOCK cut --fault-id F [--report FILE] [--writeback-s N] [--durable-before-ms T] [--unsynced-tail drop|zeros] [--exit] | status")
	}
	var req ctlRequest
	switch fl.Arg(0) {
	case "cut":
		cf := flag.NewFlagSet("cut", flag.ContinueOnError)
		fault := cf.String("fault-id", "", "fault id")
		rep := cf.String("report", "", "write the JSON report here (the daemon writes it)")
		wbs := cf.String("writeback-s", "", "keep what the kernel would have written back this many seconds before the cut")
		durable := cf.Int64("durable-before-ms", -1, "keep every change made before this instant (ms since the epoch)")
		exit := cf.Bool("exit", false, "the daemon exits once it has answered: the FUSE connection is aborted")
		tail := cf.String("unsynced-tail", tailDrop, "what a file's unsynced growth becomes: drop (cut off) or zeros (its size kept, its bytes zeros)")
		if err := cf.Parse(fl.Args()[1:]); err != nil {
			return err
		}
		if *fault == "" {
			return fmt.Errorf("cut: --fault-id is required")
		}
		req = ctlRequest{Cmd: "cut", FaultID: *fault, Report: *rep}
		if *wbs != "" {
			v, err := strconv.ParseFloat(*wbs, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return fmt.Errorf("cut: --writeback-s: want a number >= 0, got %q", *wbs)
			}
			req.WritebackS = &v
		}
		if *durable >= 0 {
			req.DurableBeforeMs = durable
		}
		req.Exit = *exit
		if *tail != tailDrop && *tail != tailZeros {
			return fmt.Errorf("cut: --unsynced-tail: want %s or %s, got %q", tailDrop, tailZeros, *tail)
		}
		if *tail == tailZeros {
			req.UnsyncedTail = tailZeros
		}
		if req.Report != "" {
			if abs, err := absPath(req.Report); err == nil {
				req.Report = abs
			}
		}
	case "status":
		req = ctlRequest{Cmd: "status"}
	default:
		return fmt.Errorf("unknown ctl command %q", fl.Arg(0))
	}
	res, err := ctlCall(*control, req)
	if len(res) > 0 {
		printJSON(os.Stdout, res)
	}
	return err
}

func printJSON(w io.Writer, raw []byte) {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		w.Write(raw)
		return
	}
	buf.WriteByte('\n')
	w.Write(buf.Bytes())
}
