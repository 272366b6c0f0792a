package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "csi-hostpath:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("csi-hostpath", flag.ContinueOnError)
	def := os.Getenv("CSI_ENDPOINT") // what ordo (and Nomad) give a csi_plugin task
	if def == "" {
		def = "unix:///tmp/csi-hostpath.sock"
	}
	endpoint := fs.String("endpoint", def, "unix socket to serve CSI on (unix:///path; default $CSI_ENDPOINT)")
	root := fs.String("root", "/tmp/csi-hostpath", "directory holding the volumes")
	nodeID := fs.String("node-id", "", "this node's id (default: the host name)")
	name := fs.String("name", "hostpath.ordo", "plugin name reported by GetPluginInfo")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *nodeID == "" {
		h, err := os.Hostname()
		if err != nil {
			return err
		}
		*nodeID = h
	}
	sock := strings.TrimPrefix(*endpoint, "unix://")
	if sock == "" || !filepath.IsAbs(sock) {
		return fmt.Errorf("-endpoint %q: want unix:///absolute/path", *endpoint)
	}
	p, err := newPlugin(*root, *nodeID, *name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		return err
	}
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	csi.RegisterIdentityServer(srv, p)
	csi.RegisterControllerServer(srv, p)
	csi.RegisterNodeServer(srv, p)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	slog.Info("csi-hostpath serving", "endpoint", sock, "root", *root, "node_id", *nodeID)
	return srv.Serve(ln)
}
