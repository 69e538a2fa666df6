package adaptiverag

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// LoadPassages reads the passages at path:
//
//   - a .json file holding an array of Passage objects
//     ({"id","text","source","company","year"});
//   - a .jsonl file holding one Passage object per line;
//   - a directory: every .txt and .md file in it (recursively), split
//     into passages at blank lines. A file named COMPANY_YEAR.ext (or
//     COMPANY-YEAR.ext), e.g. acme_2023.md, gives its passages that
//     company and year.
//
// Passages without an ID are numbered ("p1", ... for JSON; "FILE#n" for
// text files), and Source defaults to the file name. Empty passages are
// skipped.
func LoadPassages(path string) ([]Passage, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return loadDir(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ps []Passage
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
		for line := 1; sc.Scan(); line++ {
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 {
				continue
			}
			var p Passage
			if err := json.Unmarshal(b, &p); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			ps = append(ps, p)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	case ".json":
		if err := json.Unmarshal(data, &ps); err != nil {
			return nil, fmt.Errorf("%s: want a JSON array of passages: %w", path, err)
		}
	default:
		ps = splitText(filepath.Base(path), string(data))
	}
	out := ps[:0]
	for i, p := range ps {
		if strings.TrimSpace(p.Text) == "" {
			continue
		}
		if p.ID == "" {
			p.ID = "p" + strconv.Itoa(i+1)
		}
		if p.Source == "" {
			p.Source = filepath.Base(path)
		}
		out = append(out, p)
	}
	return out, nil
}

// loadDir reads the .txt and .md files under dir, in name order.
func loadDir(dir string) ([]Passage, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".txt", ".md":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []Passage
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			rel = filepath.Base(f)
		}
		out = append(out, splitText(filepath.ToSlash(rel), string(data))...)
	}
	return out, nil
}

// splitText splits a text file into passages at blank lines, with the
// company and year its name gives.
func splitText(name, text string) []Passage {
	company, year := nameMeta(name)
	var out []Passage
	for _, para := range regexp.MustCompile(`\n\s*\n`).Split(strings.ReplaceAll(text, "\r\n", "\n"), -1) {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		out = append(out, Passage{
			ID:      name + "#" + strconv.Itoa(len(out)+1),
			Text:    para,
			Source:  name,
			Company: company,
			Year:    year,
		})
	}
	return out
}

// nameMeta reads COMPANY_YEAR or COMPANY-YEAR from a file name.
func nameMeta(name string) (company string, year int) {
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	m := regexp.MustCompile(`^(.+?)[_-]((?:19|20)\d\d)$`).FindStringSubmatch(base)
	if m == nil {
		return "", 0
	}
	y, err := strconv.Atoi(m[2])
	if err != nil {
		return "", 0
	}
	return strings.ReplaceAll(m[1], "_", " "), y
}
