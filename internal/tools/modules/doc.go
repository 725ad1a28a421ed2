// Package modules holds the checks that keep the repository's modules
// apart, so that an application that imports the SDK carries the SDK
// alone: the root module's requirements held to the SDK's own list, the
// build list of an application that imports only the SDK, the versions
// such an application had already chosen left as they were, no module
// importing another's internal packages, and the small packages that two
// modules each keep a copy of held identical. Its tests are the checks;
// it has no code of its own to import.
package modules
