// Package browser starts a real headless Chromium (Debian's chromium) for
// the UI's tests and benchmarks and drives it through the DevTools
// protocol (chromedp). A machine without Chromium fails the caller: the
// UI is never tested without a browser.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// ErrNoChromium is returned when no Chromium binary is on PATH.
var ErrNoChromium = errors.New("browser: no chromium on PATH (apt-get install chromium; .ci/run installs it)")

// Path finds the Chromium binary: $ORDO_CHROMIUM, else chromium or
// chromium-browser or google-chrome on PATH.
func Path() (string, error) {
	if p := os.Getenv("ORDO_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Browser is one headless Chromium; each Tab is a context for chromedp
// actions on its own page.
type Browser struct {
	alloc  context.Context
	cancel context.CancelFunc
	first  context.Context
}

// startAttempts is how many times Start launches Chromium before it
// gives up: on a loaded machine a launch now and then exits before it
// serves DevTools, and the next one starts.
const startAttempts = 3

// Start launches Chromium with a window of width × height pixels and
// opens its first tab.
func Start(ctx context.Context, width, height int) (*Browser, error) {
	path, err := Path()
	if err != nil {
		return nil, err
	}
	var errs []error
	for range startAttempts {
		b, err := launch(ctx, path, width, height)
		if err == nil {
			return b, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("browser: start %s, %d attempts: %w", path, startAttempts, errors.Join(errs...))
}

// launch starts one Chromium at path.
func launch(ctx context.Context, path string, width, height int) (*Browser, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(width, height),
		chromedp.NoSandbox, // tests run as root in CI containers
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-gpu", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	first, cancelFirst := chromedp.NewContext(alloc)
	b := &Browser{alloc: alloc, first: first, cancel: func() { cancelFirst(); cancelAlloc() }}
	// The first action starts the browser, and lives as long as it: no
	// timeout on it (chromedp.Run).
	if err := chromedp.Do(first, chromedp.Navigate("about:blank")); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Tab returns the browser's first tab.
func (b *Browser) Tab() context.Context { return b.first }

// NewTab opens another tab, closed with the returned cancel.
func (b *Browser) NewTab() (context.Context, context.CancelFunc) {
	return chromedp.NewContext(b.first)
}

// Close stops Chromium.
func (b *Browser) Close() { b.cancel() }
