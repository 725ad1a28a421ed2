package markdown

import "github.com/yuin/goldmark/ast"

// The tests of package markdown_test share markdowntest with the server's
// tests, and markdowntest imports this package, so they cannot be in it:
// what they need of its insides is here.

// MD is the server's parser and renderer.
var MD = md

// AnalyzeParsed is Analyze of a document parsed by any parser.
func AnalyzeParsed(doc ast.Node, src []byte) Info {
	var c wordCounter
	countBlockWords(&c, doc, src)
	return Info{sections: sectionsOf(doc, src), words: c.n}
}

// SectionNames returns the names of the sections, in order.
func (info Info) SectionNames() []string {
	var out []string
	for _, s := range info.sections {
		out = append(out, s.name)
	}
	return out
}

// Words returns the word count.
func (info Info) Words() int { return info.words }
