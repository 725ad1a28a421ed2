package markdown_test

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
)

// TestHTMLExportHostileLinks renders links, images and autolinks whose
// targets run script (javascript:, vbscript:, data: other than images,
// file:) hidden by case, entities, escapes, white space and pointy
// brackets, through the HTML export's Markdown (the linear-time parser
// makes the link nodes, goldmark's renderer writes them). No target a
// browser would run may come out, no tag or attribute but Markdown's own,
// and where the source has no raw HTML the output is stock goldmark's.
func TestHTMLExportHostileLinks(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"[x](javascript:alert(1))",
		"[x](JaVaScRiPt:alert(1))",
		"[x](&#106;avascript:alert(1))",
		"[x](&#x6A;&#x61;vascript:alert(1))",
		"[x](javascript&colon;alert(1))",
		"[x](javascript\\:alert(1))",
		"[x](java&#x0A;script:alert(1))",
		"[x](java&#9;script:alert(1))",
		"[x](&#9;javascript:alert(1))",
		"[x](&#32;javascript:alert(1))",
		"[x](&#0;javascript:alert(1))",
		"[x](<javascript:alert(1)>)",
		"[x](< javascript:alert(1)>)",
		"[x](<\tjavascript:alert(1)>)",
		"[x](<java\\\nscript:alert(1)>)",
		"[x](javascript:alert(1) \"t\")",
		"[x](vbscript:msgbox(1))",
		"[x](VBScript:msgbox(1))",
		"[x](file:///etc/passwd)",
		"[x](data:text/html,<script>alert(1)</script>)",
		"[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
		"[x](DATA:text/html,x)",
		"![x](javascript:alert(1))",
		"![x](JAVASCRIPT:alert(1))",
		"![x](data:image/svg+xml;base64,PHN2Zz4=)",
		"![x](data:text/html,x)",
		"![x](&#100;ata:text/html,x)",
		"[![x](javascript:a)](javascript:b)",
		"[x]\n\n[x]: javascript:alert(1)",
		"[x][r]\n\n[r]: <JavaScript:alert(1)> 'title'",
		"[x][]\n\n[x]: &#106;avascript:alert(1)",
		"<javascript:alert(1)>",
		"<JAVASCRIPT:alert(1)>",
		"<vbscript:msgbox(1)>",
		"<data:text/html,x>",
		"<file:///etc/passwd>",
		"[x](y \"a\\\" onmouseover=alert(1)\")",
		"[x](y 'a\" onmouseover=alert(1)')",
		"![a\" onerror=alert(1) x=\"](y)",
		"[x](\"><script>alert(1)</script>)",
		"*[x](javascript:alert(1))*",
		"**[x](javascript:alert(1) 'a')**",
		// Raw HTML is shown escaped.
		"<a href=\"javascript:alert(1)\">x</a>",
		"x <img src=x onerror=alert(1)> y",
		"<script>alert(1)</script>",
		"[<script>](y)",
		"[x](<\"><script>>)",
	} {
		var out bytes.Buffer
		if err := markdown.WriteHTML(&out, []byte(src)); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		for _, problem := range unsafeHTML(got) {
			t.Errorf("%q: %s in %q", src, problem, got)
		}
		// Without raw HTML (which stock goldmark omits), the output is
		// stock goldmark's.
		if want := convert(t, stockMarkdown, src); got != want && !strings.Contains(want, "raw HTML omitted") {
			t.Errorf("%q: got %q, stock goldmark gives %q", src, got, want)
		}
	}
}

var (
	htmlTag       = regexp.MustCompile(`<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[a-z]+="[^"<>]*")*)\s*(/?)>`)
	htmlAttribute = regexp.MustCompile(`([a-z]+)="([^"]*)"`)
	// The tags and attributes Markdown's HTML uses.
	markdownTags = map[string]bool{"p": true, "a": true, "img": true, "em": true, "strong": true, "code": true, "pre": true,
		"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "ul": true, "ol": true, "li": true,
		"blockquote": true, "hr": true, "br": true}
	markdownAttributes = map[string]bool{"href": true, "src": true, "alt": true, "title": true, "start": true}
)

// unsafeHTML lists what in out, the HTML of a Markdown document, a
// browser could run: a tag or attribute Markdown does not write, a '<'
// that starts no such tag, or a link or image target whose scheme runs
// script once the browser has decoded its entities and dropped the white
// space and controls it ignores.
func unsafeHTML(out string) []string {
	var problems []string
	rest := htmlTag.ReplaceAllStringFunc(out, func(tag string) string {
		m := htmlTag.FindStringSubmatch(tag)
		if !markdownTags[strings.ToLower(m[2])] {
			problems = append(problems, "tag <"+m[2]+">")
		}
		for _, a := range htmlAttribute.FindAllStringSubmatch(m[3], -1) {
			if !markdownAttributes[a[1]] {
				problems = append(problems, "attribute "+a[1])
			}
			if (a[1] == "href" || a[1] == "src") && scriptURL(html.UnescapeString(a[2]), a[1] == "src") {
				problems = append(problems, a[1]+" "+a[2])
			}
		}
		return ""
	})
	if strings.Contains(rest, "<") {
		problems = append(problems, "a '<' that is no Markdown tag")
	}
	return problems
}

// scriptURL reports whether a browser would run u (an attribute's value,
// entities decoded): the WHATWG URL parser drops leading and trailing C0
// controls and spaces and every tab and line break, and schemes are
// case-insensitive. Images may be data: PNG, GIF, JPEG or WebP.
func scriptURL(u string, image bool) bool {
	u = strings.TrimFunc(u, func(r rune) bool { return r <= ' ' })
	u = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(strings.ToLower(u))
	for _, s := range []string{"javascript:", "vbscript:", "file:"} {
		if strings.HasPrefix(u, s) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		for _, ok := range []string{"image/png;", "image/gif;", "image/jpeg;", "image/webp;"} {
			if image && strings.HasPrefix(rest, ok) {
				return false
			}
		}
		return true
	}
	return false
}
