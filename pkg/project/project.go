// Package project finds the project a working directory belongs to: the root of its git working
// tree, with linked worktrees folded into their main working tree, so every session in any
// checkout of a repository counts toward one project.
package project

import (
	"os"
	"path/filepath"
	"strings"
)

// Root returns the project root for dir: the nearest ancestor holding .git, or, for a linked
// worktree, the main working tree that owns it. A directory outside any repository is its own
// project. It only reads the file system (no git process), so it is cheap enough for every hook call.
func Root(dir string) string {
	if dir == "" {
		return ""
	}
	dir = filepath.Clean(dir)
	for d := dir; ; {
		gitPath := filepath.Join(d, ".git")
		fi, err := os.Lstat(gitPath)
		if err == nil {
			if fi.IsDir() {
				return d
			}
			if main := worktreeMain(gitPath); main != "" {
				return main
			}
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// worktreeMain reads a .git file ("gitdir: /repo/.git/worktrees/name") and returns /repo.
func worktreeMain(gitFile string) string {
	data, err := os.ReadFile(gitFile)
	if err != nil {
		return ""
	}
	line := strings.TrimSpace(string(data))
	gitdir, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(gitFile), gitdir)
	}
	gitdir = filepath.Clean(gitdir)
	// <main>/.git/worktrees/<name>
	wt := filepath.Dir(gitdir)
	if filepath.Base(wt) != "worktrees" {
		return "" // a submodule or a separate git dir: the directory holding the .git file is the root
	}
	dotGit := filepath.Dir(wt)
	if filepath.Base(dotGit) != ".git" {
		return ""
	}
	return filepath.Dir(dotGit)
}
