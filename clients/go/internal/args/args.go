// Package args turns the command line into a validated Config (clients/README.md,
// "Flags"). The flag package handles the syntax (--flag value, --flag=value, --help);
// every value is then checked by a small function whose error is one line naming the
// flag, the value and the fix, so main can print it and exit 2.
package args

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Name prefixes every error line.
const Name = "client-go"

// DefaultOrders is --orders when neither --orders nor --duration is given.
const DefaultOrders = 1000

// MaxConnections bounds --connections: more would exhaust file descriptors first.
const MaxConnections = 10000

// Config is a validated run configuration; every field is a flag of Contract 2.
type Config struct {
	OrderURL    string        // URL/order, where every order is posted
	Address     string        // host:port of --url, probed with a TCP connect before the run
	Orders      uint64        // measured orders; 0 when Duration ends the run
	Duration    time.Duration // --duration; 0 when Orders ends the run
	Connections int           // concurrent keep-alive connections = worker goroutines
	Warmup      uint64        // orders sent first and not recorded
	Rate        float64       // open loop: total target orders/s; 0 = closed loop
	Timeout     time.Duration // per request, until the answer is fully read
	Scenario    string        // label copied into the result
	Seed        uint64        // seed of the order stream
	Output      string        // result JSON path; "" = stdout and no .hlog
}

// ErrHelp is returned with the usage text when --help was asked for (exit 0).
type ErrHelp struct{ Usage string }

func (e *ErrHelp) Error() string { return e.Usage }

// Parse validates argv (without the program name).
func Parse(argv []string) (Config, error) {
	fs := flag.NewFlagSet(Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	raw := map[string]*string{}
	def := func(name, value, usage string) { raw[name] = fs.String(name, value, usage) }
	def("url", "http://127.0.0.1:8080", "server base URL; orders go to URL/order")
	def("orders", "", "measured orders, after warm-up (N >= 1) (default 1000)")
	def("duration", "", "instead of --orders: measure for S seconds (S > 0)")
	def("connections", "10", "concurrent keep-alive connections (C >= 1)")
	def("warmup", "100", "orders sent first and not recorded (W >= 0)")
	def("rate", "", "open loop: total target orders/s (R > 0); absent = closed loop")
	def("timeout-ms", "1000", "per-request timeout in milliseconds (T >= 1)")
	def("scenario", "adhoc", "label copied into the result")
	def("seed", "1", "seed of the order stream (0 <= N < 2^64)")
	def("output", "", "result JSON path; the .hlog goes beside it (default stdout, no .hlog)")

	if err := fs.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, &ErrHelp{Usage: usage(fs)}
		}
		return Config{}, flagError(err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q; every value needs its flag, run %s --help", fs.Arg(0), Name)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return validate(raw, set)
}

func validate(raw map[string]*string, set map[string]bool) (Config, error) {
	var c Config
	var err error
	if c.OrderURL, c.Address, err = URL(*raw["url"]); err != nil {
		return c, err
	}
	switch {
	case set["orders"] && set["duration"]:
		return c, errors.New("--orders and --duration are mutually exclusive; pass only one of them")
	case set["duration"]:
		var s float64
		if s, err = Positive("--duration", *raw["duration"], "10"); err != nil {
			return c, err
		}
		c.Duration = time.Duration(s * float64(time.Second))
	case set["orders"]:
		if c.Orders, err = Integer("--orders", *raw["orders"], 1, "1000"); err != nil {
			return c, err
		}
	default:
		c.Orders = DefaultOrders
	}
	conns, err := Integer("--connections", *raw["connections"], 1, "10")
	if err != nil {
		return c, err
	}
	if conns > MaxConnections {
		return c, fmt.Errorf("--connections must be at most %d (got %q); pass e.g. --connections 100", MaxConnections, *raw["connections"])
	}
	c.Connections = int(conns)
	if c.Warmup, err = Integer("--warmup", *raw["warmup"], 0, "100"); err != nil {
		return c, err
	}
	if set["rate"] {
		if c.Rate, err = Positive("--rate", *raw["rate"], "5000"); err != nil {
			return c, err
		}
	}
	ms, err := Integer("--timeout-ms", *raw["timeout-ms"], 1, "1000")
	if err != nil {
		return c, err
	}
	if ms > math.MaxInt64/uint64(time.Millisecond) {
		return c, fmt.Errorf("--timeout-ms is too large (got %q); pass e.g. --timeout-ms 1000", *raw["timeout-ms"])
	}
	c.Timeout = time.Duration(ms) * time.Millisecond
	if c.Scenario = *raw["scenario"]; strings.TrimSpace(c.Scenario) == "" {
		return c, errors.New("--scenario must not be empty; pass e.g. --scenario adhoc")
	}
	if c.Seed, err = Integer("--seed", *raw["seed"], 0, "1"); err != nil {
		return c, err
	}
	c.Output = *raw["output"]
	return c, nil
}

// Integer parses an unsigned integer >= min.
func Integer(flagName, raw string, min uint64, example string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(raw), 10, 64)
	if err != nil || v < min {
		return 0, fmt.Errorf("%s must be an integer >= %d (got %q); pass e.g. %s %s", flagName, min, raw, flagName, example)
	}
	return v, nil
}

// Positive parses a finite number > 0.
func Positive(flagName, raw, example string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v >= 1e12 {
		return 0, fmt.Errorf("%s must be a number > 0 (got %q); pass e.g. %s %s", flagName, raw, flagName, example)
	}
	return v, nil
}

// URL checks --url and returns URL/order and the host:port to probe.
func URL(raw string) (orderURL, address string, err error) {
	bad := func(why string) error {
		return fmt.Errorf("--url %s (got %q); pass e.g. --url http://127.0.0.1:8080", why, raw)
	}
	u, perr := url.Parse(raw)
	if perr != nil {
		return "", "", bad("is not a valid URL")
	}
	// Plain HTTP only, as the other clients: the server speaks no TLS.
	if u.Scheme != "http" {
		return "", "", bad("must start with http://")
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	if u.Hostname() == "" {
		return "", "", bad("has no host")
	}
	if p, perr := strconv.ParseUint(port, 10, 16); perr != nil || p == 0 {
		return "", "", bad("has an invalid port")
	}
	return strings.TrimRight(raw, "/") + "/order", net.JoinHostPort(u.Hostname(), port), nil
}

// flagError rewrites the flag package's errors as the contract's one line.
func flagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return fmt.Errorf("unknown flag --%s; run %s --help for the flags", strings.TrimLeft(name, "-"), Name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		f := "--" + strings.TrimLeft(name, "-")
		return fmt.Errorf("%s needs a value; pass e.g. %s=VALUE (see --help)", f, f)
	}
	return fmt.Errorf("%s; run %s --help", strings.SplitN(msg, "\n", 2)[0], Name)
}

func usage(fs *flag.FlagSet) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s: hft-bench load client (net/http)\n\nUsage: %s [flags]\n\n", Name, Name)
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	return strings.ReplaceAll(b.String(), "\n  -", "\n  --")
}
