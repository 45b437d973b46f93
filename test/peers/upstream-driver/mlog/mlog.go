// Package mlog is OUR stand-in for monis.app/mlog v0.0.2, written for the test peer
// `upstream-driver` (test/peers/install.sh). The module proxy our machines reach
// refuses monis.app/mlog, and upstream's driver v1.6.0 uses it only to set up logging
// (cmd/secrets-store-csi-driver/main.go and pkg/secrets-store/server.go). This file
// provides just the names those two files call, with the same signatures as their
// call sites need; it is not a copy of the real package. With it the driver logs
// through klog's default text logger; JSON output (--log-format-json) is refused.
package mlog

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/klog/v2"
)

// LogFormat is the log output format main.go chooses from --log-format-json.
type LogFormat string

const (
	// FormatText is klog's default text output, the only one this stand-in writes.
	FormatText LogFormat = "text"
	// FormatJSON is accepted as a value but refused by ValidateAndSetKlogLevelAndFormatGlobally.
	FormatJSON LogFormat = "json"
)

// Setup returns the function main.go defers: it flushes klog's buffered lines on exit.
func Setup() func() {
	return klog.Flush
}

// ValidateAndSetKlogLevelAndFormatGlobally checks the -v level main.go read back from
// klog and the format; klog's flags already hold the level, so nothing else is set.
func ValidateAndSetKlogLevelAndFormatGlobally(_ context.Context, level klog.Level, format LogFormat) error {
	if level < 0 {
		return fmt.Errorf("klog level %d is negative", level)
	}
	switch format {
	case FormatText:
		return nil
	case FormatJSON:
		return errors.New("--log-format-json is not supported by this build (mlog stand-in, text logs only)")
	default:
		return fmt.Errorf("unknown log format %q", format)
	}
}

// Error logs err with msg and optional key/value pairs at error severity.
func Error(msg string, err error, keysAndValues ...any) {
	klog.ErrorSDepth(1, err, msg, keysAndValues...)
}

// Fatal logs err, flushes klog and exits with status 1 (main.go's and server.go's last resort).
func Fatal(err error, keysAndValues ...any) {
	klog.ErrorSDepth(1, err, "fatal error", keysAndValues...)
	klog.FlushAndExit(klog.ExitFlushTimeout, 1)
}
