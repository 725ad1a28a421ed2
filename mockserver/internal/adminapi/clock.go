package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// clockJSON is the admin API's view of the server's clock, with when the
// next delivery attempt is due.
type clockJSON struct {
	Now       string `json:"now"`
	Fake      bool   `json:"fake"`
	NextDueAt string `json:"nextDueAt,omitempty"`
}

// clockState is the clock now, and when the next delivery attempt is
// due.
func (h *Handler) clockState() clockJSON {
	c := clockJSON{Now: jsonwire.FormatTime(h.svc.Engine.Now()), Fake: h.c.Advancer != nil}
	if at, ok := h.svc.Deliveries.NextDue(); ok {
		c.NextDueAt = jsonwire.FormatTime(at)
	}
	return c
}

func (h *Handler) getClock(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteValue(w, http.StatusOK, h.clockState())
}

// maxAdvanceSeconds bounds the seconds of an advance to 100 years, well
// within time.Duration (about 292 years).
const maxAdvanceSeconds = 100 * 365 * 24 * 3600

// DurationPattern is the grammar of an advance's duration, the same text as
// the document's pattern (TestDocumentPatternsAreTheServers): 0, or Go
// duration units in the order h, m, s, ms, us (or µs, μs), ns, each at most once and
// with a bounded number of digits, so that every duration it admits is
// one time.ParseDuration reads without overflow (at most about 260 years)
// and none is negative.
const DurationPattern = `^(?:0|(?:[0-9]{1,6}(?:\.[0-9]{0,9})?h)?(?:[0-9]{1,7}(?:\.[0-9]{0,9})?m)?` +
	`(?:[0-9]{1,9}(?:\.[0-9]{0,9})?s)?(?:[0-9]{1,12}(?:\.[0-9]{0,9})?ms)?` +
	`(?:[0-9]{1,15}(?:\.[0-9]{0,9})?(?:us|µs|μs))?(?:[0-9]{1,18}ns)?)$`

var durationRegexp = regexp.MustCompile(DurationPattern)

func (h *Handler) advanceClock(w http.ResponseWriter, r *http.Request) {
	f, e := readObject(w, r, "duration", "seconds", "toNextDue")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	var d time.Duration
	rawD, hasD := f["duration"]
	rawS, hasS := f["seconds"]
	rawN, hasN := f["toNextDue"]
	given := 0
	for _, has := range []bool{hasD, hasS, hasN} {
		if has {
			given++
		}
	}
	switch {
	case given != 1:
		httpapi.WriteError(w, httpapi.BadRequest("", `give exactly one of "duration" (a Go duration such as "90s" or "1h30m"), "seconds" (a number) and "toNextDue" (true)`))
		return
	case hasN:
		if string(rawN) != "true" {
			httpapi.WriteError(w, httpapi.BadRequest("toNextDue", "toNextDue must be true"))
			return
		}
	case hasD:
		str, e := httpapi.DecodeString("duration", rawD)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		if strings.HasPrefix(str, "-") {
			httpapi.WriteError(w, httpapi.BadRequest("duration", fmt.Sprintf("duration %q must be positive: the clock only moves forward", str)))
			return
		}
		var err error
		if !durationRegexp.MatchString(str) {
			err = errors.New("no match")
		} else {
			d, err = time.ParseDuration(str)
		}
		if err != nil || str == "" {
			httpapi.WriteError(w, httpapi.BadRequest("duration", fmt.Sprintf("duration %q is not a duration such as \"90s\" or \"1h30m\": "+
				"units in the order h, m, s, ms, us, ns, each at most once, with at most 6, 7, 9, 12, 15 and 18 digits", str)))
			return
		}
	default:
		var secs float64
		if err := json.Unmarshal(rawS, &secs); err != nil || math.IsNaN(secs) {
			httpapi.WriteError(w, httpapi.BadRequest("seconds", "seconds must be a number"))
			return
		}
		if secs < 0 {
			httpapi.WriteError(w, httpapi.BadRequest("seconds", "the clock only moves forward: give zero seconds or more"))
			return
		}
		if secs > maxAdvanceSeconds {
			httpapi.WriteError(w, httpapi.BadRequest("seconds", fmt.Sprintf("seconds must be at most %d (100 years)", maxAdvanceSeconds)))
			return
		}
		d = time.Duration(secs * float64(time.Second))
	}
	res, e, err := h.advance(r.Context(), d, hasN)
	switch {
	case e != nil:
		httpapi.WriteError(w, e)
	case err != nil:
		// The client went away: the advance stopped at a due time, and
		// there is no one to answer.
		h.svc.Logger.Info("clock advance stopped: its request ended", "now", jsonwire.FormatTime(h.svc.Engine.Now()), "attempts", res.Attempts)
	default:
		httpapi.WriteValue(w, http.StatusOK, res)
	}
}

// clockAdvanceJSON is the answer of an advance: the clock after it, and
// how many delivery attempts ran while it advanced.
type clockAdvanceJSON struct {
	clockJSON
	Attempts int `json:"attempts"`
}

// advance moves the server's clock forward by d, or with toNextDue to
// the next waiting attempt's due time, running everything due on the way
// (as FakeClock.AdvanceContext does), and says how many attempts ran. The
// next due time is read once the advance's turn has come and what was
// due already has run, and the attempts are counted within the turn, so
// a concurrent advance counts its own. A real clock is a 409, and so is
// toNextDue with nothing waiting; when ctx ends the advance stops at a
// due time and ctx's error is returned.
func (h *Handler) advance(ctx context.Context, d time.Duration, toNextDue bool) (clockAdvanceJSON, *httpapi.Error, error) {
	adv := h.c.Advancer
	if adv == nil {
		return clockAdvanceJSON{}, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict,
			Message: "the server runs on the real clock, which cannot be advanced; start it with a fake clock (the command's -fake-clock, or mockserver.WithClock(mockserver.NewFakeClock(t)))"}, nil
	}
	if err := adv.TakeTurn(ctx); err != nil {
		return clockAdvanceJSON{}, nil, err
	}
	defer adv.GiveTurn()
	before := h.svc.Deliveries.AttemptsStarted()
	// What is due now runs first: the next due time is the one after.
	adv.RunDue()
	if toNextDue {
		at, waiting := h.svc.Deliveries.NextDue()
		if !waiting {
			return clockAdvanceJSON{}, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict,
				Message: "no delivery attempt is waiting, so there is no next due time to advance to"}, nil
		}
		d = max(at.Sub(h.svc.Engine.Now()), 0)
	}
	err := adv.RunTo(ctx, h.svc.Engine.Now().Add(d))
	if !h.c.ClockTellsChanges {
		// A FakeClock tells the dashboards itself, at each time it reaches.
		h.svc.Changes.Publish(changes.Change{Kind: changes.KindClock, Now: jsonwire.FormatTime(h.svc.Engine.Now())})
	}
	return clockAdvanceJSON{clockJSON: h.clockState(), Attempts: int(h.svc.Deliveries.AttemptsStarted() - before)}, nil, err
}
