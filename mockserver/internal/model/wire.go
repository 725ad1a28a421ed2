package model

import "time"

// timeFormat is how the contract writes a time: RFC 3339 in UTC with
// millisecond precision (jsonwire.TimeFormat, which a test holds equal).
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// formatTime formats t in timeFormat, in UTC.
func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }
