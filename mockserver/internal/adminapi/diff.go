package adminapi

import (
	"net/http"
	"strconv"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/linediff"
)

// DiffJSON is the answer of GET /_mock/contexts/{id}/diff: its contextId,
// names and tags are a Version's (TestAdminShapesFollowTheWire).
type DiffJSON struct {
	ContextID    string         `json:"contextId"`
	From         int            `json:"from"`
	To           int            `json:"to"`
	FromName     string         `json:"fromName"`
	ToName       string         `json:"toName"`
	FromTags     []string       `json:"fromTags"`
	ToTags       []string       `json:"toTags"`
	Identical    bool           `json:"identical"`
	TooDifferent bool           `json:"tooDifferent"`
	Added        int            `json:"added"`
	Removed      int            `json:"removed"`
	Hunks        []DiffHunkJSON `json:"hunks"`
	// HunksLeftOut counts the hunks past MaxDiffTextBytes, not sent.
	HunksLeftOut int `json:"hunksLeftOut,omitempty"`
	// FromContent and ToContent are both texts, when they are too
	// different to diff, each cut to MaxDiffContentBytes;
	// FromContentCut and ToContentCut count the bytes left out.
	FromContent    *string `json:"fromContent,omitempty"`
	ToContent      *string `json:"toContent,omitempty"`
	FromContentCut int     `json:"fromContentCut,omitempty"`
	ToContentCut   int     `json:"toContentCut,omitempty"`
}

// The bounds of a diff's answer, so that two versions of 1,000,000 bytes
// answer at most about 1 MB of JSON (the page shows it all), not both
// texts whole (and each '<' escaped six bytes long: 12 MB).
const (
	// MaxDiffLineBytes cuts a longer line of a hunk; the line's cut
	// counts the bytes left out.
	MaxDiffLineBytes = 2 << 10
	// MaxDiffTextBytes bounds the text of the hunks sent, all lines
	// together; the lines and hunks past it are left out and counted.
	MaxDiffTextBytes = 256 << 10
	// MaxDiffContentBytes cuts each text sent when the versions are too
	// different to diff.
	MaxDiffContentBytes = 128 << 10
)

// DiffHunkJSON is a hunk of a DiffJSON.
type DiffHunkJSON struct {
	FromStart int            `json:"fromStart"`
	FromLines int            `json:"fromLines"`
	ToStart   int            `json:"toStart"`
	ToLines   int            `json:"toLines"`
	Lines     []DiffLineJSON `json:"lines"`
	// LinesLeftOut counts the lines of the hunk past MaxDiffTextBytes,
	// not sent (the last hunk sent may end early).
	LinesLeftOut int `json:"linesLeftOut,omitempty"`
}

// DiffLineJSON is a line of a DiffHunkJSON.
type DiffLineJSON struct {
	Op        string `json:"op"`
	Text      string `json:"text"`
	NoNewline bool   `json:"noNewline,omitempty"`
	// Cut counts the bytes of the line past MaxDiffLineBytes, not sent.
	Cut int `json:"cut,omitempty"`
}

var diffOpNames = map[linediff.Op]string{linediff.Equal: "equal", linediff.Delete: "delete", linediff.Insert: "insert"}

// versionParam reads the optional version query parameter name: absent
// is 0.
func versionParam(r *http.Request, name string) (int, *httpapi.Error) {
	vs, ok := r.URL.Query()[name]
	if !ok {
		return 0, nil
	}
	n, valid := httpapi.ParseVersion(vs[0])
	if len(vs) > 1 || !valid {
		return 0, httpapi.BadRequest(name, name+" must be one version number (1 or more)")
	}
	return n, nil
}

// diffContext diffs the content of two versions of any account's
// context, line by line (the linediff package): to defaults to the latest version,
// from to the one before to. Two versions too different to diff within
// the diff's bounds are answered with both texts. The answer is bounded
// too (MaxDiffLineBytes, MaxDiffTextBytes, MaxDiffContentBytes).
func (h *Handler) diffContext(w http.ResponseWriter, r *http.Request) {
	from, e := versionParam(r, "from")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	to, e := versionParam(r, "to")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	id := r.PathValue("id")
	fv, tv, from, to, n, ok, found := h.svc.Store.TwoVersions(id, from, to)
	switch {
	case !found:
		httpapi.WriteError(w, httpapi.NotFound("no context with id "+strconv.Quote(id)))
		return
	case !ok:
		httpapi.WriteError(w, httpapi.NotFound("context "+strconv.Quote(id)+" has versions 1 to "+strconv.Itoa(n)))
		return
	}
	// Versions never change once recorded: the diff runs unlocked.

	d := linediff.Texts(fv.Content, tv.Content)
	out := DiffJSON{ContextID: id, From: from, To: to, FromName: fv.Name, ToName: tv.Name, FromTags: fv.Tags, ToTags: tv.Tags,
		Identical: d.Identical, TooDifferent: d.TooDifferent, Added: d.Added, Removed: d.Removed, Hunks: []DiffHunkJSON{}}
	sent := 0 // bytes of text in the hunks so far
	for n, h := range d.Hunks {
		if sent >= MaxDiffTextBytes {
			out.HunksLeftOut = len(d.Hunks) - n
			break
		}
		hj := DiffHunkJSON{FromStart: h.FromStart, FromLines: h.FromLines, ToStart: h.ToStart, ToLines: h.ToLines,
			Lines: make([]DiffLineJSON, 0, len(h.Lines))}
		for i, l := range h.Lines {
			if sent >= MaxDiffTextBytes {
				// One hunk may hold 1,000 changed lines: it ends here.
				hj.LinesLeftOut = len(h.Lines) - i
				break
			}
			text := jsonwire.CutUTF8(l.Text, MaxDiffLineBytes)
			sent += len(text)
			hj.Lines = append(hj.Lines, DiffLineJSON{Op: diffOpNames[l.Op], Text: text, NoNewline: l.NoNewline, Cut: len(l.Text) - len(text)})
		}
		out.Hunks = append(out.Hunks, hj)
	}
	if d.TooDifferent {
		from, to := jsonwire.CutUTF8(fv.Content, MaxDiffContentBytes), jsonwire.CutUTF8(tv.Content, MaxDiffContentBytes)
		out.FromContent, out.ToContent = &from, &to
		out.FromContentCut, out.ToContentCut = len(fv.Content)-len(from), len(tv.Content)-len(to)
	}
	if out.FromTags == nil {
		out.FromTags = []string{}
	}
	if out.ToTags == nil {
		out.ToTags = []string{}
	}
	writeText(w, out)
}
