// Command upstream-fake-provider is a test peer: a Secrets Store CSI provider
// gRPC server (v1alpha1 CSIDriverProvider service) whose server side is written
// by upstream, for wire-interop tests of our driver against a provider we did not
// write.
//
// Why it exists: the natural peer for this is upstream's e2e provider
// (sigs.k8s.io/secrets-store-csi-driver/test/e2eprovider), but that nested module
// is not served by the Go module proxy (403 "This module version is not
// available"), so it cannot be installed. This program instead wraps upstream's
// mock provider server from the released driver module
// (sigs.k8s.io/secrets-store-csi-driver/provider/fake, v1.6.0). Only this thin
// command-line and config wrapper is ours; test/peers/install.sh builds it in a
// throwaway module outside the work tree.
//
// Usage:
//
//	upstream-fake-provider --endpoint unix:///tmp/x/fake.sock --config cfg.json
//
// Config file (JSON; unknown keys are rejected, every key is optional):
//
//	{
//	  "objects":     {"<id>": "<version>"},
//	  "files":       [{"path": "foo", "mode": 420, "contents": "<base64>"}],
//	  "errorCode":   "",  // MountResponse.error.code
//	  "returnError": ""   // non-empty: Mount fails with this gRPC error (code Unknown)
//	}
//
// Signals: SIGHUP re-reads the config and applies it (prints "reloaded config"
// to stderr; on a bad config it prints the error and keeps the previous one).
// SIGTERM/SIGINT stop the server gracefully and exit 0. "listening on <socket>"
// is printed to stderr once the server is listening.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/secrets-store-csi-driver/provider/fake"
	"sigs.k8s.io/secrets-store-csi-driver/provider/v1alpha1"
)

const prog = "upstream-fake-provider"

// maxSocketPath is the longest path a Linux sockaddr_un can hold (108 bytes
// including the terminating NUL).
const maxSocketPath = 107

// stopTimeout bounds the graceful stop; after it the process exits anyway.
const stopTimeout = 10 * time.Second

type fileConfig struct {
	Path     string `json:"path"`
	Mode     int32  `json:"mode"`
	Contents []byte `json:"contents"` // standard base64 in JSON
}

type config struct {
	Objects     map[string]string `json:"objects"`
	Files       []fileConfig      `json:"files"`
	ErrorCode   string            `json:"errorCode"`
	ReturnError string            `json:"returnError"`
}

func loadConfig(path string) (*config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("parsing config %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("parsing config %s: trailing data after the JSON object", path)
	}
	return &c, nil
}

// apply hands the config to the mock. Paths and modes are passed through
// unvalidated on purpose, so tests can feed the driver bad provider output.
func apply(s *fake.MockCSIProviderServer, c *config) {
	s.SetObjects(c.Objects)
	files := make([]*v1alpha1.File, 0, len(c.Files))
	for _, f := range c.Files {
		files = append(files, &v1alpha1.File{Path: f.Path, Mode: f.Mode, Contents: f.Contents})
	}
	s.SetFiles(files)
	s.SetProviderErrorCode(c.ErrorCode)
	if c.ReturnError != "" {
		s.SetReturnError(errors.New(c.ReturnError))
	} else {
		s.SetReturnError(nil)
	}
}

// socketPath turns unix:///abs/path.sock or a bare path into a file path.
func socketPath(endpoint string) (string, error) {
	p := endpoint
	if strings.HasPrefix(p, "unix://") {
		p = strings.TrimPrefix(p, "unix://")
		if !strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("--endpoint %q: want unix:///absolute/path", endpoint)
		}
	} else if strings.Contains(p, "://") {
		return "", fmt.Errorf("--endpoint %q: only unix:// endpoints are supported", endpoint)
	}
	if p == "" {
		return "", fmt.Errorf("--endpoint %q: empty socket path", endpoint)
	}
	if len(p) > maxSocketPath {
		return "", fmt.Errorf("--endpoint: socket path is %d bytes, the limit is %d: %s", len(p), maxSocketPath, p)
	}
	return filepath.Clean(p), nil
}

// removeStaleSocket deletes a leftover socket file; it refuses to delete
// anything that is not a socket.
func removeStaleSocket(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket; not removing it", p)
	}
	return os.Remove(p)
}

func die(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, prog+": "+format+"\n", args...)
	os.Exit(code)
}

func main() {
	// Catch signals first so an early SIGHUP cannot kill the process.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)

	endpoint := flag.String("endpoint", "", "unix:///abs/path.sock or a bare socket path (required)")
	configPath := flag.String("config", "", "JSON config file (required); re-read on SIGHUP")
	flag.Parse()
	if *endpoint == "" || *configPath == "" || flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "usage: %s --endpoint unix:///path.sock --config config.json\n", prog)
		os.Exit(2)
	}
	sock, err := socketPath(*endpoint)
	if err != nil {
		die(2, "%v", err)
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		die(1, "%v", err)
	}

	s, err := fake.NewMocKCSIProviderServer(sock)
	if err != nil {
		die(1, "creating server: %v", err)
	}
	apply(s, cfg)
	if err := removeStaleSocket(sock); err != nil {
		die(1, "%v", err)
	}
	if err := s.Start(); err != nil {
		die(1, "listening on %s: %v", sock, err)
	}
	fmt.Fprintf(os.Stderr, "listening on %s\n", sock)

	for sig := range sigs {
		if sig == syscall.SIGHUP {
			c, err := loadConfig(*configPath)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: reload failed, keeping the previous config: %v\n", prog, err)
				continue
			}
			apply(s, c)
			fmt.Fprintln(os.Stderr, "reloaded config")
			continue
		}
		done := make(chan struct{})
		go func() { s.Stop(); close(done) }()
		select {
		case <-done:
		case <-time.After(stopTimeout):
			fmt.Fprintf(os.Stderr, "%s: graceful stop timed out after %s\n", prog, stopTimeout)
		}
		_ = os.Remove(sock) // normally already unlinked by the listener's Close
		os.Exit(0)
	}
}
