// Command weftserve is a stand-in for `weft serve` used by bench/serve
// while the CLI command does not exist: it serves workflow files over the
// LangGraph Server API (package server) on a SQLite store.
//
// Usage:
//
//	weftserve FILE.wf... [--addr 127.0.0.1:2024] [--store /tmp/x.db]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/sqlite"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:2024", "address to listen on")
	path := flag.String("store", "weftserve.db", "SQLite store file")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the whole serving time to this file")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: weftserve FILE.wf... [--addr HOST:PORT] [--store PATH]")
		flag.PrintDefaults()
	}
	// Flags may follow the files, as in `weft serve FILE --addr A`.
	// It is called as weft is: `weftserve serve FILE...` is accepted.
	var files []string
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	for {
		if err := flag.CommandLine.Parse(args); err != nil {
			os.Exit(2)
		}
		if flag.NArg() == 0 {
			break
		}
		files = append(files, flag.Arg(0))
		args = flag.Args()[1:]
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "weftserve:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(*addr, *path, files); err != nil {
		fmt.Fprintln(os.Stderr, "weftserve:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(addr, path string, files []string) error {
	if len(files) == 0 {
		return errors.New("no workflow file given")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		return err
	}
	defer svc.Close()
	var as []server.Assistant
	for _, f := range files {
		wf, err := svc.Open(ctx, service.File(f))
		if err != nil {
			return err
		}
		as = append(as, server.Assistant{Workflow: wf})
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv, err := server.New(server.Options{Service: svc, Store: st, Assistants: as, Logger: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "store", path)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(hs.Shutdown(sctx), srv.Close(sctx))
	log.Info("stopped", "err", err)
	return err
}
