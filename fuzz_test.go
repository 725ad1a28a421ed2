package contextsvc

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzVerifySignature checks, for any payload, secret and header:
// VerifySignature never panics; the signature Sign makes always verifies;
// a header other than that signature never verifies; every error matches
// ErrInvalidSignature and reveals neither the secret nor the signature.
func FuzzVerifySignature(f *testing.F) {
	f.Add([]byte(githubVector.payload), githubVector.secret, githubVector.header)
	f.Add([]byte(`{"id":"evt_1","type":"context.created"}`), "whsec_x", "")
	f.Add([]byte("x"), "k", "sha256=")
	f.Add([]byte("x"), "k", "sha1=0123456789abcdef0123456789abcdef01234567")
	f.Add([]byte("x"), "k", "sha256="+strings.Repeat("0", 64))
	f.Add([]byte("x"), "k", "sha256="+strings.Repeat("F", 64))
	f.Add([]byte(""), "", "sha256="+strings.Repeat("g", 64))
	f.Add([]byte("\x00\xff"), strings.Repeat("long", 40), "sha256="+strings.Repeat("a", 63))
	f.Fuzz(func(t *testing.T, payload []byte, secret, header string) {
		err := VerifySignature(payload, header, secret)
		if err != nil && !errors.Is(err, ErrInvalidSignature) {
			t.Fatalf("error %v does not match ErrInvalidSignature", err)
		}
		if secret == "" {
			if !errors.Is(err, ErrNoSecret) {
				t.Fatalf("empty secret: err = %v, want ErrNoSecret", err)
			}
			return
		}
		good := Sign(payload, secret)
		if (err == nil) != (header == good) {
			t.Fatalf("header %q: err = %v, but the valid signature is %q", header, err, good)
		}
		if err := VerifySignature(payload, good, secret); err != nil {
			t.Fatalf("valid signature refused: %v", err)
		}
		// Every error is one of the constant sentinels, so its text cannot
		// carry the secret or the expected signature.
		if err != nil && !isSignatureSentinel(err) {
			t.Fatalf("error %q is not one of the constant sentinels", err)
		}
	})
}

// FuzzConstructEvent checks, for any payload: ConstructEvent never panics;
// with a valid signature it returns an event with id, type and timestamp
// inside the replay window, an error matching ErrOutsideReplayWindow
// exactly when ParseEvent's event is outside it, or an error matching
// ErrMalformedEvent exactly when ParseEvent fails (never a signature
// error), and the event's typed data is readable for known types; with a
// header that is not the valid signature it returns a signature error and
// no event. The window is measured on a fixed clock.
func FuzzConstructEvent(f *testing.F) {
	const secret = "whsec_fuzz"
	for _, s := range []string{
		`{"id":"evt_1","type":"context.updated","timestamp":"2026-11-21T20:51:00.123Z","data":{"contextId":"ctx_1","name":"n","version":2,"updatedBy":"user_1","changes":{"sections_modified":["A"],"word_count_delta":-1}}}`,
		`{"id":"evt_2","type":"export.completed","timestamp":"2026-11-21T20:51:00Z","data":{"exportId":"exp_1","contextId":"ctx_1","version":1,"format":"pdf","sizeBytes":10}}`,
		`{"id":"evt_3","type":"brand.new","timestamp":"2026-11-21T20:51:00+01:00","data":[1,2,3]}`,
		`{"id":"evt_4","type":"team.member.added","timestamp":"2026-11-21T20:51:00Z","data":{"teamId":"team_1","userId":"user_1","role":"admin"}}`,
		`{"id":"evt_5","type":"context.created","timestamp":"2026-11-21T20:51:00Z","data":null}`,
		`{"id":"","type":"context.created","timestamp":"2026-11-21T20:51:00Z"}`,
		`{"id":"evt_6","type":"context.deleted","timestamp":"yesterday"}`,
		`{"id":"evt_7"`,
		`[]`,
		``,
		// At and just past the edges of the window, on fuzzClock.
		`{"id":"evt_8","type":"brand.new","timestamp":"2026-11-20T17:51:00Z"}`,
		`{"id":"evt_9","type":"brand.new","timestamp":"2026-11-20T17:50:59.999Z"}`,
		`{"id":"evt_10","type":"brand.new","timestamp":"2026-11-21T20:56:00Z"}`,
		`{"id":"evt_11","type":"brand.new","timestamp":"2026-11-21T20:56:00.001Z"}`,
		`{"id":"evt_12","type":"brand.new","timestamp":"2026-11-19T20:51:00Z"}`,
		`{"id":"evt_13","type":"brand.new","timestamp":"0001-01-01T00:00:00.001Z"}`,
		`{"id":"evt_14","type":"brand.new","timestamp":"9999-12-31T23:59:59Z"}`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	fuzzNow := time.Date(2026, 11, 21, 20, 51, 0, 0, time.UTC)
	fuzzClock := func() time.Time { return fuzzNow }
	f.Fuzz(func(t *testing.T, payload []byte, signed bool) {
		header := Sign(payload, secret)
		if !signed {
			header = Sign(append([]byte("tampered"), payload...), secret)
		}
		ev, err := ConstructEventWithOptions(payload, header, []string{secret}, WithEventClock(fuzzClock))
		if !signed {
			if !errors.Is(err, ErrSignatureMismatch) || ev != nil {
				t.Fatalf("unsigned payload: event %+v, err %v", ev, err)
			}
			return
		}
		parsed, perr := ParseEvent(payload)
		outside := perr == nil && (parsed.Timestamp.Before(fuzzNow.Add(-DefaultReplayWindow)) || parsed.Timestamp.After(fuzzNow.Add(DefaultFutureSkew)))
		switch {
		case perr != nil:
			if errors.Is(err, ErrInvalidSignature) || !errors.Is(err, ErrMalformedEvent) || ev != nil {
				t.Fatalf("signed payload ParseEvent refuses (%v): event %+v, err %v; want ErrMalformedEvent only", perr, ev, err)
			}
			return
		case outside:
			// The window off accepts what ParseEvent accepts, of any age.
			if _, err := ConstructEventWithOptions(payload, header, []string{secret}, WithEventReplayWindow(0, 0)); err != nil {
				t.Fatalf("window off: %v", err)
			}
			if !errors.Is(err, ErrOutsideReplayWindow) || errors.Is(err, ErrInvalidSignature) || errors.Is(err, ErrMalformedEvent) || ev != nil {
				t.Fatalf("signed payload of %s: event %+v, err %v; want ErrOutsideReplayWindow only", parsed.Timestamp, ev, err)
			}
			return
		case err != nil:
			t.Fatalf("signed payload inside the window: %v", err)
		}
		if ev.ID == "" || ev.Type == "" || ev.Timestamp.IsZero() {
			t.Fatalf("event lacks id, type or timestamp: %+v", ev)
		}
		if _, err := ev.ParseData(); err != nil {
			t.Fatalf("ParseData of an accepted event: %v", err)
		}
	})
}

func isSignatureSentinel(err error) bool {
	for _, s := range []error{ErrMissingSignature, errNoPrefix, errBadLength, errNotHex, ErrSignatureMismatch, ErrNoSecret} {
		if err == s {
			return true
		}
	}
	return false
}

// FuzzContextPath checks, for any id, that contextPath either refuses it
// with ErrInvalidArgument or builds a path in which the id is exactly one
// segment: the URL parses back to the same segment, with no query and no
// fragment, it is no dot segment, and decoding it once more (as a proxy
// might) still gives one segment that is no dot segment.
func FuzzContextPath(f *testing.F) {
	for _, id := range []string{"ctx_1", "", ".", "..", "a/b", "a?b", "a#b", "%2e%2e", "..;", `a\b`, `a"b|c`, "ctx 1", "é", "\x00"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		p, err := contextPath(id, "/versions")
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("contextPath(%q): %v, want ErrInvalidArgument", id, err)
			}
			return
		}
		u, err := url.Parse("https://api.example.test/v1" + p)
		if err != nil || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("contextPath(%q) = %q: parses to %v, %v", id, p, u, err)
		}
		segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/v1/contexts/"), "/")
		if len(segs) != 2 || segs[1] != "versions" {
			t.Fatalf("contextPath(%q) = %q: segments %q", id, p, segs)
		}
		once, err := url.PathUnescape(segs[0])
		if err != nil || once != id {
			t.Fatalf("contextPath(%q) = %q: the segment decodes to %q, %v", id, p, once, err)
		}
		twice, err := url.PathUnescape(once)
		if err == nil && (strings.ContainsAny(twice, `/\?#`) || twice == "." || twice == "..") {
			t.Fatalf("contextPath(%q) = %q: decoded twice, the segment is %q", id, p, twice)
		}
	})
}
