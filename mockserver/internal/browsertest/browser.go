// Package browsertest runs Debian's chromium, headless, for the browser
// tests of this module: one process per test binary, its DevTools endpoint
// on a loopback port the kernel chose, a fresh profile removed afterwards,
// no way to reach any host but this one, and stopped by its PID.
//
// Tests use it through [Main], [New] and the helpers over the tab New
// returns: [Messages] and [NoErrors] for the console, [Screenshot] and
// [PageTiming]. Each test gets a tab of its own in a browser context of its
// own (its own cookies, storage and cache), closed when the test ends; the
// browser is shared by every test of the binary and stopped by Main. Where
// chromium is not installed the tests skip and say how to install it; with
// CI=true they fail instead. Programs use [Launch], [Browser.NewTab] and
// [Browser.Close].
//
// The package is test support: only _test.go files and commands under
// internal/ import it, so github.com/chromedp/chromedp never reaches the
// product.
package browsertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/systeminfo"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/testproc"
)

// InstallHint is how to install the program this package runs.
const InstallHint = "apt-get install chromium"

// ProgramEnv names the environment variable that overrides the program to
// run: a path, or a name looked up on PATH (chromium-browser,
// chrome-headless-shell, google-chrome…). Without it the package runs
// "chromium" from PATH, which on Debian is /usr/bin/chromium.
const ProgramEnv = "BROWSERTEST_CHROMIUM"

// ErrNotInstalled is returned when the program is not found.
var ErrNotInstalled = errors.New("chromium not found on PATH")

// startTimeout bounds how long Launch waits for the DevTools endpoint. A
// warm start takes about a second on a 2-core machine; a cold one (nothing
// in the page cache) or a busy CI runner takes longer.
const startTimeout = 30 * time.Second

// stopTimeout bounds how long Close waits for chromium to exit on SIGTERM
// before it kills it.
const stopTimeout = 10 * time.Second

// Browser is a headless chromium process and the DevTools endpoint it
// listens on. Its methods are safe for concurrent use.
type Browser struct {
	dir   string // profile, HOME and TMPDIR of the process; removed by Close
	cmd   *exec.Cmd
	done  chan struct{} // closed when cmd has exited
	out   *startupLog   // the process's output, for error messages
	wsURL string

	allocCtx    context.Context // remote allocator: every tab dials wsURL
	allocCancel context.CancelFunc

	closeOnce sync.Once
	closeErr  error
}

// Launch starts chromium headless and returns once its DevTools endpoint
// answers and says it belongs to the process just started. Call Close to
// stop it and remove its directory.
func Launch() (*Browser, error) {
	path, err := Installed()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		return nil, err
	}
	b, err := start(path, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return b, nil
}

// PID returns the process id of chromium's browser process.
func (b *Browser) PID() int { return b.cmd.Process.Pid }

// WebSocketURL returns the browser's DevTools endpoint,
// ws://127.0.0.1:port/devtools/browser/id.
func (b *Browser) WebSocketURL() string { return b.wsURL }

// Dir returns the directory that holds the browser's profile, home and
// temporary files; Close removes it.
func (b *Browser) Dir() string { return b.dir }

// Close closes every tab, stops chromium by its PID (SIGTERM, its clean
// shutdown, then SIGKILL if it has not exited after 10 seconds; then
// SIGKILL to whatever is left of its process group) and removes its
// directory. Closing twice returns the first result.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		b.allocCancel()
		b.closeErr = errors.Join(b.stop(), os.RemoveAll(b.dir))
	})
	return b.closeErr
}

// stop ends the process and waits for it.
func (b *Browser) stop() error {
	pid := b.cmd.Process.Pid
	defer testproc.KillGroup(pid)
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		select {
		case <-b.done: // it had exited already
			return nil
		default:
		}
		return fmt.Errorf("browsertest: signalling chromium (pid %d): %w", pid, err)
	}
	select {
	case <-b.done:
		return nil
	case <-time.After(stopTimeout):
		b.cmd.Process.Kill()
		<-b.done
		return fmt.Errorf("browsertest: chromium (pid %d) ignored SIGTERM for %v and was killed", pid, stopTimeout)
	}
}

// args returns chromium's command line (without the program) for a
// browser whose files go in dir. Each flag is there to keep the browser
// headless, hermetic (no request leaves this machine, nothing is read
// from or written to the user's profile), quiet and the same on every
// machine.
func args(dir string) []string {
	return []string{
		"--headless",
		// Chromium refuses to run as root with its sandbox on, and CI
		// runs as root. The pages are the tests' own.
		"--no-sandbox",
		"--disable-gpu",
		// The DevTools endpoint on a port the kernel chooses, on
		// 127.0.0.1 (the default address): no race with another
		// process for a port picked in advance. Chromium prints the
		// endpoint on stderr.
		"--remote-debugging-port=0",
		"--user-data-dir=" + filepath.Join(dir, "profile"),

		// Hermetic: every host name but localhost resolves to nothing,
		// so whatever a feature of the browser tries to fetch (the
		// component updater, variations, safe browsing, translation,
		// optimization hints…) fails at once instead of reaching
		// Google's hosts or waiting for a network that is not there.
		// Tests use 127.0.0.1 or localhost URLs.
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE [::1]",
		"--no-proxy-server", // ignore http_proxy and friends
		"--disable-quic",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-extensions",
		"--disable-default-apps",
		"--disable-domain-reliability",
		"--disable-client-side-phishing-detection",
		"--disable-breakpad",
		"--disable-crash-reporter",
		"--no-pings",
		"--metrics-recording-only",
		"--safebrowsing-disable-auto-update",
		"--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
		"--password-store=basic", // never the desktop's keyring
		"--no-first-run",
		"--no-default-browser-check",

		// Robust on CI: containers often have a 64 MB /dev/shm, which
		// chromium fills and then crashes; its shared memory goes in
		// TMPDIR (the browser's own directory) instead.
		"--disable-dev-shm-usage",
		// Tabs of parallel tests are all "in the background": do not
		// throttle their timers or renderers, so a Server-Sent Event
		// or a setTimeout runs when it is due.
		"--disable-background-timer-throttling",
		"--disable-backgrounding-occluded-windows",
		"--disable-renderer-backgrounding",
		"--disable-hang-monitor",
		"--disable-ipc-flooding-protection",
		"--disable-popup-blocking",
		"--disable-prompt-on-repost",
		// Lets Browser.getBrowserCommandLine answer, and is what
		// automation tools set.
		"--enable-automation",

		// The same pixels on every machine: a fixed window, sRGB, no
		// scroll bars, no sound.
		"--window-size=1280,800",
		"--force-color-profile=srgb",
		"--hide-scrollbars",
		"--mute-audio",
		"about:blank",
	}
}

// maxTmpDir is the longest TMPDIR chromium starts with: it puts its
// singleton socket at $TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket,
// a Unix socket's path has at most 107 bytes, and with a longer one it
// exits at once ("Socket path too long"). Where the browser's own
// directory is that deep, chromium keeps the TMPDIR it was given.
const maxTmpDir = 107 - len("/org.chromium.Chromium.XXXXXX/SingletonSocket")

// start runs chromium with its files in dir and waits until its DevTools
// endpoint answers.
func start(path, dir string) (*Browser, error) {
	// HOME, TMPDIR and the XDG directories in dir: chromium writes its
	// NSS database (~/.pki), crash database, fontconfig cache and
	// shared-memory files there, never in the user's, and Close removes
	// them with the profile.
	home := filepath.Join(dir, "home")
	tmp := filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(path, args(dir)...)
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
	)
	if len(tmp) <= maxTmpDir {
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	}
	cmd.Dir = dir
	out := newStartupLog(16 << 10)
	cmd.Stdout, cmd.Stderr = out, out
	testproc.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("browsertest: starting %s: %w", path, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	b := &Browser{dir: dir, cmd: cmd, done: done, out: out}
	if err := b.waitReady(); err != nil {
		cmd.Process.Kill()
		<-done
		testproc.KillGroup(cmd.Process.Pid)
		return nil, fmt.Errorf("browsertest: %s: %w; its output:\n%s", path, err, out.String())
	}
	return b, nil
}

// waitReady waits for chromium to print its DevTools endpoint, then
// connects and asks the browser for its process id. Only the process
// just started counts: if the program forked instead of exec'ing (a
// wrapper script that outlives the browser, say), its PID would not be
// the browser's, and stopping by PID would leave the browser running.
// The answer also shows the endpoint works, as a PONG does.
func (b *Browser) waitReady() error {
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case b.wsURL = <-b.out.endpoint:
	case <-b.done:
		return errors.New("the process exited before it listened")
	case <-timer.C:
		return fmt.Errorf("no DevTools endpoint within %v", startTimeout)
	}
	if !strings.HasPrefix(b.wsURL, "ws://127.0.0.1:") {
		return fmt.Errorf("DevTools listens on %s, not on 127.0.0.1", b.wsURL)
	}
	b.allocCtx, b.allocCancel = remote.NewAllocator(context.Background(), b.wsURL, remote.NoModifyURL)
	ctx, cancel := chromedp.NewContext(b.allocCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, startTimeout)
	defer cancelTimeout()
	info, err := chromedp.CallBrowser(ctx, systeminfo.GetProcessInfo, cdp.Empty{})
	if err == nil {
		err = errors.New("no process of type browser")
		for _, p := range info.ProcessInfo {
			if p.Type == "browser" {
				if pid := int(p.ID); pid != b.cmd.Process.Pid {
					err = fmt.Errorf("the browser's process id is %d, not %d", pid, b.cmd.Process.Pid)
				} else {
					err = nil
				}
				break
			}
		}
	}
	if err != nil {
		b.allocCancel()
		return fmt.Errorf("DevTools at %s: %w", b.wsURL, err)
	}
	return nil
}

// Installed returns the path of the program to run (see [ProgramEnv]), or
// an error wrapping [ErrNotInstalled].
func Installed() (string, error) {
	if name := os.Getenv(ProgramEnv); name != "" {
		path, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("%w: %s=%s: %v", ErrNotInstalled, ProgramEnv, name, err)
		}
		return path, nil
	}
	path, err := exec.LookPath("chromium")
	if err != nil {
		return "", ErrNotInstalled
	}
	return path, nil
}

// startupLog keeps the last max bytes of the process's output and sends,
// once, the DevTools endpoint chromium prints on a line of its own:
// "DevTools listening on ws://127.0.0.1:port/devtools/browser/id".
type startupLog struct {
	endpoint chan string // buffered; receives the endpoint once

	mu   sync.Mutex
	max  int
	b    []byte
	line []byte // the unfinished line, until the endpoint is found
	sent bool
}

func newStartupLog(max int) *startupLog {
	return &startupLog{endpoint: make(chan string, 1), max: max}
}

const endpointPrefix = "DevTools listening on "

func (l *startupLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if over := len(l.b) - l.max; over > 0 {
		l.b = append(l.b[:0], l.b[over:]...)
	}
	if l.sent {
		return len(p), nil
	}
	l.line = append(l.line, p...)
	for {
		i := bytes.IndexByte(l.line, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(l.line[:i]))
		l.line = l.line[i+1:]
		if url, ok := strings.CutPrefix(line, endpointPrefix); ok {
			l.sent, l.line = true, nil
			l.endpoint <- url
			break
		}
	}
	// A line that never ends (no newline in 16 KiB) is not the endpoint.
	if len(l.line) > l.max {
		l.line = l.line[:0]
	}
	return len(p), nil
}

// String returns the output kept.
func (l *startupLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
