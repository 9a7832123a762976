//go:build tools

// Package tools pins the Temporal CLI that carries the dev server: go.mod names the CLI release and,
// above what that release asks for, the SQLite driver of its in-memory store (see
// scripts/install-temporal.sh for why). Nothing here is compiled into the project.
package tools

import _ "github.com/temporalio/cli/cmd/temporal"
