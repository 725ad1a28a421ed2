package contextsvc

// EventType names the kind of a webhook event. The same constants are used
// when registering a webhook (which events to receive) and when reading a
// delivered [Event].
type EventType string

// The event types the service sends.
const (
	EventContextCreated        EventType = "context.created"
	EventContextUpdated        EventType = "context.updated"
	EventContextDeleted        EventType = "context.deleted"
	EventContextPublished      EventType = "context.published"
	EventContextVersionCreated EventType = "context.version.created"
	EventTeamMemberAdded       EventType = "team.member.added"
	EventTeamMemberRemoved     EventType = "team.member.removed"
	EventExportCompleted       EventType = "export.completed"
)

// AllEventTypes returns every event type this SDK knows, in the reference's
// order. It returns a new slice on each call, so callers may modify it.
func AllEventTypes() []EventType {
	return []EventType{
		EventContextCreated,
		EventContextUpdated,
		EventContextDeleted,
		EventContextPublished,
		EventContextVersionCreated,
		EventTeamMemberAdded,
		EventTeamMemberRemoved,
		EventExportCompleted,
	}
}

// Known reports whether t is one of the event types this SDK knows. A newer
// service may send types that are not known; they still parse.
func (t EventType) Known() bool {
	switch t {
	case EventContextCreated, EventContextUpdated, EventContextDeleted,
		EventContextPublished, EventContextVersionCreated,
		EventTeamMemberAdded, EventTeamMemberRemoved, EventExportCompleted:
		return true
	}
	return false
}

// Changes describes what an update changed in a context's Markdown: the
// headings of the sections whose body was added, changed or removed (the
// text before the first heading is the section "(preamble)"), and the words
// of the new rendered text minus those of the old. It appears on a
// [Version] and in the data of a context.updated event.
type Changes struct {
	SectionsModified []string `json:"sections_modified"`
	WordCountDelta   int      `json:"word_count_delta"`
}
