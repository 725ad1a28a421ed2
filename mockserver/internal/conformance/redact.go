package conformance

import (
	"net/url"
	"strings"
)

// redacted replaces a secret wherever a report would show it.
const redacted = "[REDACTED]"

// redactor replaces the run's secrets (the API keys, the webhook secret)
// and the receiver's URL (which may carry a token) in any text.
type redactor struct{ r *strings.Replacer }

func newRedactor(secrets []string, receiverURL string) redactor {
	secrets = append([]string(nil), secrets...)
	var pairs []string
	if receiverURL != "" {
		pairs = append(pairs, receiverURL, shownURL(receiverURL))
		// Its parts too, wherever they show on their own (a JSON body
		// escapes the URL's "&").
		if u, err := url.Parse(receiverURL); err == nil {
			if p, ok := u.User.Password(); ok {
				secrets = append(secrets, p)
			}
			for k, vs := range u.Query() {
				if k == runQueryParam {
					continue
				}
				for _, v := range vs {
					if len(v) >= 4 { // shorter ones say nothing and are everywhere
						secrets = append(secrets, v)
					}
				}
			}
		}
	}
	for _, s := range secrets {
		if s != "" {
			pairs = append(pairs, s, redacted)
		}
	}
	return redactor{strings.NewReplacer(pairs...)}
}

func (r redactor) text(s string) string { return r.r.Replace(s) }

// shownURL is a receiver URL without what may be a secret in it: its user
// information and the values of its query parameters but the run's own.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redacted
	}
	u.User = nil
	q := u.Query()
	for k := range q {
		if k != runQueryParam {
			q[k] = []string{"…"}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// redact applies r to every text of the report.
func (rep *Report) redact(r redactor) {
	if rep.Unreachable != nil {
		rep.Unreachable.Message = r.text(rep.Unreachable.Message)
	}
	for _, c := range rep.Checks {
		c.Note = r.text(c.Note)
		for _, d := range c.Differences {
			d.Request, d.Contract, d.Got = r.text(d.Request), r.text(d.Contract), r.text(d.Got)
			for i := range d.Document {
				d.Document[i].Message = r.text(d.Document[i].Message)
			}
			if d.SDK != nil {
				d.SDK.SDK = r.text(d.SDK.SDK)
			}
		}
	}
	for i := range rep.Tolerance {
		rep.Tolerance[i].SDK = r.text(rep.Tolerance[i].SDK)
	}
	for i := range rep.LeftBehind {
		rep.LeftBehind[i].Why = r.text(rep.LeftBehind[i].Why)
	}
}
