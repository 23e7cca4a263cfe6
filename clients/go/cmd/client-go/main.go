// Command client-go is the hft-bench load client on net/http:
// flags → probe → run → result. All logic lives in internal/.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"

	"hftbench/clients/go/internal/args"
	"hftbench/clients/go/internal/result"
	"hftbench/clients/go/internal/runner"
)

func main() { os.Exit(run()) }

func run() int {
	c, err := args.Parse(os.Args[1:])
	var help *args.ErrHelp
	if errors.As(err, &help) {
		fmt.Print(help.Usage)
		return 0
	}
	if err != nil {
		return fail(err)
	}
	if err := runner.Probe(c.Address, runner.ProbeDeadline); err != nil {
		return fail(err)
	}
	// Open the output before the run so an unwritable path costs seconds, not a whole run.
	sink, err := result.OpenSink(c.Output)
	if err != nil {
		return fail(err)
	}
	runner.SetProcs(c)
	var stop atomic.Bool
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	go func() {
		<-interrupts
		stop.Store(true)
	}()
	res, err := runner.Run(c, &stop)
	if err != nil {
		return fail(err)
	}
	if err := sink.Write(res); err != nil {
		return fail(err)
	}
	if res.Errors > 0 {
		return 1
	}
	return 0
}

// fail prints the contract's one line and exits 2.
func fail(err error) int {
	fmt.Fprintf(os.Stderr, "%s: %v\n", args.Name, err)
	return 2
}
