// Package model is what the mock server's public package and its internal
// packages share: the types a user of mockserver sees (a [Delivery] and
// its attempts, an [Event], a [Webhook], a [Fault], the [Chaos] mode, a [Key], a stored
// context, the errors of a state document or file, what the validating
// proxy found) and the errors its methods return. Each is defined here
// once; package mockserver re-exports it under the same name, a type by
// an alias (type Delivery = model.Delivery) and an error by a variable
// (var ErrDeliveryNotFound = model.ErrDeliveryNotFound), and every
// internal package uses the same type and names the same error where it
// returns it. Nothing converts one copy of a type into another, and no
// error is handed to the package that returns it.
//
// The documentation a user reads is mockserver's (go doc ./mockserver);
// the fields are documented here, with their definitions.
//
// It imports nothing of the mock server, so every part of it may import
// it. A file holds one subject: what the server's users see of it, its
// methods (those of the public API only: a method here is a method of
// mockserver's type) and its errors. A new subject the server shows its
// users gets a file of its own and its aliases in mockserver: the settings
// of the chaos mode and what chaos did to a delivery attempt are chaos.go
// here, the field of DeliveryAttempt saying what chaos did there is
// delivery.go's, and mockserver's chaos.go re-exports them. Behaviour
// that is no part of the public API (matching a fault to a request,
// validating one, copying a record) is the owning package's, as functions.
//
// wire.go is the one exception to the aliases: it defines the contract's
// objects as the server writes them on the wire ([ContextJSON],
// [VersionJSON], [WebhookJSON], [EventJSON]), which mockserver does not
// re-export. They are the one definition of each shape in the server:
// its hand-written encoders, the admin API's and the state document's
// shapes and its tests are held to them.
package model
