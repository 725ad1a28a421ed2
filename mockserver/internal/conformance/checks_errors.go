package conformance

import (
	"net/http"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// caseValues fills in the error cases' requests for this run.
func (r *runner) caseValues(subject contract.Subject) contract.Values {
	v := contract.Values{
		Name:       r.name("refused"),
		Tag:        r.tag,
		WebhookURL: "https://example.invalid/" + r.tag,
		Secret:     "whsec_contextsvc_conform_probe",
	}
	switch subject {
	case contract.SubjectMissing:
		v.ID = r.missingID
	case contract.SubjectOwn:
		v.ID = r.own
	}
	return v
}

// probe sends one error case and holds the answer to it. Whatever a 2xx
// answer created (a server that accepts what the contract refuses) is kept
// for the clean-up.
func (c *checker) probe(ec contract.ErrorCase) {
	v := c.r.caseValues(ec.Subject)
	rq := request{method: ec.Method, path: strings.ReplaceAll(ec.Path, "{id}", v.ID), auth: ec.Auth, header: ec.Header}
	if ec.Body != nil {
		rq.body = ec.Body(v)
	}
	ex := c.send(rq)
	c.r.keepAnswer(ex)
	c.errorAnswer(ex, ec.Status, ec.Type, ec.Param)
}

// checkErrors runs the error cases of one status that the key provokes
// without needing a context of the run: those that create nothing, and
// (only in a run that may create) the 413.
func (r *runner) checkErrors(status int) func(c *checker) {
	return func(c *checker) {
		n := 0
		for _, ec := range contract.ErrorCases() {
			if ec.Status != status || ec.Auth == contract.AuthReadKey || ec.Subject == contract.SubjectOwn ||
				!ec.Safe && status != http.StatusRequestEntityTooLarge {
				continue
			}
			c.probe(ec)
			n++
		}
		c.res.Note = plural(n, "case")
	}
}

// checkValidation runs the error cases that address a context of the run,
// or that a server not following the contract could turn into something
// created: the field rules of create, update, export and registration.
func (r *runner) checkValidation(c *checker) {
	if !r.ensureOwn(c) {
		return
	}
	n := 0
	for _, ec := range contract.ErrorCases() {
		if ec.Safe || ec.Auth == contract.AuthReadKey || ec.Status == http.StatusRequestEntityTooLarge {
			continue
		}
		c.probe(ec)
		n++
	}
	c.res.Note = plural(n, "case")
}

// checkForbidden runs the read-scope key's cases: writes refused (those
// that could create only in a run that may create), and a read served.
func (r *runner) checkForbidden(c *checker) {
	n := 0
	for _, ec := range contract.ErrorCases() {
		if ec.Auth != contract.AuthReadKey || !ec.Safe && r.cfg.ReadOnly {
			continue
		}
		c.probe(ec)
		n++
	}
	ex := c.send(request{method: http.MethodGet, path: "/contexts?limit=1", auth: contract.AuthReadKey})
	c.answer(ex, http.StatusOK, "with a page of contexts: a read-scope key may read", contract.Expect{})
	c.res.Note = plural(n, "case") + " and a read"
}

// ensureOwn creates, once, the context the error cases address.
func (r *runner) ensureOwn(c *checker) bool {
	if r.own != "" {
		return true
	}
	ctx, ok := c.create(r.name("errors"), "# Errors\n\nThe context the refused requests address.", nil)
	if !ok {
		c.skip("could not create the context its requests address")
		return false
	}
	r.own = ctx.ID
	return true
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return itoa(n) + " " + what + "s"
}
