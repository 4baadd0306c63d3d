package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/web"
)

func newViewCmd() *cobra.Command {
	var root, addr, export string
	var maxRowMB int64
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Local web dashboard: runs, charts, transcripts, comparisons and the leaderboard",
		Long: `Serves a dashboard for every run under --root: a runs table (filters, live progress of
running evaluations), each run's metrics with intervals, charts and token costs, every
transcript (filters for wrong answers, errors and reward disagreements, paged on the server),
paired comparisons of runs and the leaderboard. Everything is embedded: it needs no network
and opens nothing; open the printed URL yourself. Model output is shown escaped, never as HTML.
Files are read only under --root: a symlink in a run directory that leads outside it is refused.`,
		Example: "  svbench view --root outputs\n  svbench view --root outputs --addr 127.0.0.1:8080\n  svbench view --root outputs --export site   # a static copy to open from disk or publish",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			if maxRowMB <= 0 {
				return usagef("--max-row-mb %d: want a positive size", maxRowMB)
			}
			srv, err := web.New(root, web.Options{Addr: addr, Log: log, MaxRowBytes: maxRowMB << 20})
			if err != nil {
				return usageError(err)
			}
			defer srv.Close()
			if export != "" {
				res, err := srv.Export(export)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "svbench view: exported %d pages (%d files) of the runs under %s to %s; open %s in a browser, or publish the folder\n",
					res.Pages, res.Files, root, export, filepath.Join(export, "index.html"))
				for _, p := range res.SkippedPages {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: run %s: %s not exported (a page saying why stands in): %s\n", p.Run, p.URL, p.Reason)
				}
				return nil
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w (pick another port with --addr 127.0.0.1:PORT)", addr, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "svbench view: http://%s/ (runs under %s; Ctrl-C stops)\n", ln.Addr(), root)
			hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
			done := make(chan error, 1)
			go func() { done <- hs.Serve(ln) }()
			select {
			case err := <-done:
				return err
			case <-cmd.Context().Done():
				hs.Close()
				if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
					return err
				}
				return nil
			}
		},
	}
	cmd.Flags().StringVar(&root, "root", "outputs", "directory holding run directories")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:7777", "listen address (keep it on loopback: the dashboard has no authentication)")
	cmd.Flags().StringVar(&export, "export", "", "write a self-contained static copy of the dashboard (every run, chart, transcript and rollout, relative links) into this new directory and exit, like inspect view bundle")
	cmd.Flags().Int64Var(&maxRowMB, "max-row-mb", web.DefaultMaxRowBytes>>20, "results rows larger than this (MiB) are listed as too large and never read whole")
	return cmd
}
