// Package ui tests the web UI (commands/httpapi/ui) in a real headless
// Chromium against a real dev agent with a client: pages update live,
// the time slider shows the past with writes disabled, the timeline
// links to entities, and every page passes the accessibility basics.
// With ORDO_UI_SCREENSHOTS=dir (screenshots/ is git-ignored), screenshots
// of the main pages are written there for a reviewer; they are not
// committed, and make test takes none.
package ui
