package cursor

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// maxWorkspaces bounds the workspace databases read for the composers' folders.
const maxWorkspaces = 2000

// workspaceCache keeps what each workspace database said, by directory, read again only when
// the database changed.
type workspaceCache struct {
	mu      sync.Mutex
	entries map[string]workspaceEntry
}

type workspaceEntry struct {
	sig       string
	folder    string
	composers []string
}

// workspaceFolders maps the composers the workspaces of userDir list to their folders (see the
// package doc). Workspaces that cannot be read are left out.
func (a *Adapter) workspaceFolders(userDir string) map[string]string {
	out := map[string]string{}
	dir := filepath.Join(userDir, "workspaceStorage")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	a.workspaces.mu.Lock()
	defer a.workspaces.mu.Unlock()
	if a.workspaces.entries == nil {
		a.workspaces.entries = map[string]workspaceEntry{}
	}
	for i, e := range entries {
		if i >= maxWorkspaces {
			break
		}
		ws := filepath.Join(dir, e.Name())
		db := filepath.Join(ws, "state.vscdb")
		sig := fileSig(db) + "|" + fileSig(db+"-wal") + "|" + fileSig(filepath.Join(ws, "workspace.json"))
		we, ok := a.workspaces.entries[ws]
		if !ok || we.sig != sig {
			we = workspaceEntry{sig: sig, folder: workspaceFolder(filepath.Join(ws, "workspace.json"))}
			if we.folder != "" {
				we.composers = workspaceComposers(db)
			}
			a.workspaces.entries[ws] = we
		}
		for _, id := range we.composers {
			out[id] = we.folder
		}
	}
	return out
}

func fileSig(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "-"
	}
	return strconv.FormatInt(fi.Size(), 10) + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
}

// workspaceFolder reads workspace.json's folder (a file:// URI); "" for a multi-root workspace or
// a remote one.
func workspaceFolder(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 1<<20 {
		return ""
	}
	var w struct {
		Folder string `json:"folder"`
	}
	if json.Unmarshal(data, &w) != nil {
		return ""
	}
	return filePath(w.Folder)
}

// workspaceComposers reads the composer ids a workspace database lists in ItemTable's
// composer.composerData.
func workspaceComposers(db string) []string {
	if _, err := os.Stat(db); err != nil {
		return nil
	}
	start := func() []string { return nil }
	ids, _, _ := readPass(context.Background(), db, start, func(ctx context.Context, conn *sql.DB, ids *[]string) (struct{}, error) {
		var v []byte
		err := conn.QueryRowContext(ctx, "SELECT CAST(value AS TEXT) FROM ItemTable WHERE key = 'composer.composerData'").Scan(&v)
		if err != nil {
			return struct{}{}, err
		}
		var d struct {
			AllComposers []struct {
				ComposerID string `json:"composerId"`
			} `json:"allComposers"`
		}
		if json.Unmarshal(v, &d) != nil {
			return struct{}{}, nil
		}
		for _, c := range d.AllComposers {
			if c.ComposerID != "" {
				*ids = append(*ids, c.ComposerID)
			}
		}
		return struct{}{}, nil
	})
	return ids
}
