package args

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDefaultsFollowTheContract(t *testing.T) {
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		OrderURL: "http://127.0.0.1:8080/order", Address: "127.0.0.1:8080", Orders: 1000,
		Connections: 10, Warmup: 100, Timeout: time.Second, Scenario: "adhoc", Seed: 1,
	}
	if c != want {
		t.Fatalf("got %+v, want %+v", c, want)
	}
}

func TestBothFlagSpellings(t *testing.T) {
	c, err := Parse([]string{"--orders=5", "--connections", "3", "--rate=250.5", "--seed=18446744073709551615"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Orders != 5 || c.Connections != 3 || c.Rate != 250.5 || c.Seed != ^uint64(0) {
		t.Fatalf("%+v", c)
	}
	d, err := Parse([]string{"--duration", "1.5", "--url", "http://localhost:9/base/"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Duration != 1500*time.Millisecond || d.Orders != 0 || d.OrderURL != "http://localhost:9/base/order" || d.Address != "localhost:9" {
		t.Fatalf("%+v", d)
	}
}

func TestBadValuesAreOneLineNamingTheFlagAndTheFix(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--connections", "0"}, `--connections must be an integer >= 1 (got "0"); pass e.g. --connections 10`},
		{[]string{"--orders", "-5"}, `--orders must be an integer >= 1 (got "-5")`},
		{[]string{"--rate", "abc"}, `--rate must be a number > 0 (got "abc")`},
		{[]string{"--rate", "0"}, `--rate must be a number > 0`},
		{[]string{"--duration", "NaN"}, `--duration must be a number > 0`},
		{[]string{"--timeout-ms", "0"}, `--timeout-ms must be an integer >= 1`},
		{[]string{"--seed", "18446744073709551616"}, `--seed must be an integer >= 0`},
		{[]string{"--url", "ftp://x"}, `--url must start with http://`},
		{[]string{"--url", "https://127.0.0.1:8443"}, `--url must start with http:// (got "https://127.0.0.1:8443")`},
		{[]string{"--bogus", "1"}, `unknown flag --bogus; run client-go --help`},
		{[]string{"--orders"}, `--orders needs a value`},
		{[]string{"--orders", "5", "--duration", "1"}, `--orders and --duration are mutually exclusive`},
		{[]string{"stray"}, `unexpected argument "stray"`},
	}
	for _, tc := range cases {
		_, err := Parse(tc.args)
		if err == nil {
			t.Fatalf("%v: accepted", tc.args)
		}
		var help *ErrHelp
		if errors.As(err, &help) {
			t.Fatalf("%v: treated as help", tc.args)
		}
		if !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got %q, want prefix %q on one line", tc.args, err, tc.want)
		}
	}
}

func TestHelpIsNotAnError(t *testing.T) {
	_, err := Parse([]string{"--help"})
	var help *ErrHelp
	if !errors.As(err, &help) || !strings.Contains(help.Usage, "--connections") {
		t.Fatalf("got %v", err)
	}
}
