package mockserver

// DefaultHistoryLimit is how many events, and how many finished webhook
// deliveries, a [Server] keeps when [WithHistoryLimit] is not given: some
// 10 to 20 MB with typical payloads, and hours of a busy test suite's
// history.
const DefaultHistoryLimit = 10_000

// MaxEventHistoryBytes bounds the event history in bytes as the history
// limit bounds it in events: past either, the oldest events are dropped
// first. An event counts its envelope (its data included) and what the
// history spends on holding it (some 200 bytes). POST /_mock/events takes
// up to 2 MiB of data, so without it 10,000 events could hold 20 GB; with
// it they hold at most 64 MiB, and the newest event is always kept.
const MaxEventHistoryBytes = 64 << 20
