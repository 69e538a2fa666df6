// Package pgtest starts throwaway PostgreSQL clusters for tests, from the
// server binaries on the machine (initdb, pg_ctl, postgres: on PATH or under
// /usr/lib/postgresql/*/bin). When they are missing, tests skip with a
// message saying how to install them.
//
// One cluster is shared by a whole test binary when its TestMain calls Main;
// each test then gets a fresh database from New:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestX(t *testing.T) {
//		db := pgtest.New(t) // a new database in the shared cluster
//		pool, err := pgxpool.New(ctx, db.DSN)
//		...
//	}
//
// A test that stops or restarts the server uses a cluster of its own, from
// Start, so that it does not disturb the others.
//
// PostgreSQL refuses to run as root. When the tests run as root, the
// cluster's files belong to the "postgres" system user (created with
// useradd if missing) and initdb, pg_ctl and the server run under that
// user's uid and gid.
package pgtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// envShared names the environment variable through which Main hands the
// shared cluster to New: the cluster's Info as JSON. Using the environment
// keeps the package free of mutable package-level state.
const envShared = "WEFT_PGTEST_CLUSTER"

// superuser is the cluster's superuser role, made by initdb.
const superuser = "postgres"

// InstallHint says how to get the server binaries.
const InstallHint = "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or under /usr/lib/postgresql/*/bin; install them with: apt-get install -y postgresql"

// ErrNoBinaries is returned by StartCluster when the server binaries are
// missing.
var ErrNoBinaries = errors.New("pgtest: " + InstallHint)

// Info describes a running cluster; it is what Main passes to New.
type Info struct {
	BinDir    string // where initdb, pg_ctl and postgres are
	Dir       string // the cluster's top directory: data, socket, log
	Port      int    // TCP port on 127.0.0.1
	UID, GID  int    // the user the server runs as; -1 for the current one
	Temporary bool   // Dir is removed when the cluster stops
}

// Cluster is a running PostgreSQL server on 127.0.0.1.
type Cluster struct {
	info  Info
	dbSeq atomic.Int64
}

// Main starts one cluster for the test binary, runs the tests and stops the
// cluster; it returns m.Run's exit code. When the server binaries are
// missing it runs the tests anyway: New then skips them.
func Main(m *testing.M) int {
	c, err := StartCluster("")
	if err != nil {
		if !errors.Is(err, ErrNoBinaries) {
			fmt.Fprintln(os.Stderr, "pgtest: starting the shared cluster:", err)
			return 1
		}
		return m.Run()
	}
	code := func() int {
		defer func() {
			if err := c.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "pgtest:", err)
			}
		}()
		b, err := json.Marshal(c.info)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			return 1
		}
		if err := os.Setenv(envShared, string(b)); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			return 1
		}
		defer os.Unsetenv(envShared)
		return m.Run()
	}()
	return code
}

// DB is a database made for one test.
type DB struct {
	Name    string
	DSN     string // a postgres:// URL to it over TCP
	Cluster *Cluster
}

// New returns a fresh database in the cluster Main started, or, without
// Main, in a cluster of the test's own. It skips the test when the server
// binaries are missing.
func New(t testing.TB) *DB {
	t.Helper()
	c := shared(t)
	if c == nil {
		c = Start(t)
	}
	db, err := c.CreateDB(context.Background(), "")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return db
}

// shared returns the cluster Main started, or nil.
func shared(t testing.TB) *Cluster {
	s := os.Getenv(envShared)
	if s == "" {
		return nil
	}
	var info Info
	if err := json.Unmarshal([]byte(s), &info); err != nil {
		t.Fatalf("pgtest: bad %s: %v", envShared, err)
	}
	c := &Cluster{info: info}
	c.dbSeq.Store(time.Now().UnixNano() % 1e9)
	return c
}

// Start starts a cluster for one test (in t.TempDir's sibling, owned by the
// server's user) and stops it when the test ends. It skips the test when
// the server binaries are missing.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c, err := StartCluster("")
	if errors.Is(err, ErrNoBinaries) {
		t.Skip(InstallHint)
	}
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return c
}

// StartCluster initializes and starts a cluster in dir, or, if dir is
// empty, in a new temporary directory removed by Stop. The error is
// ErrNoBinaries when the server binaries are missing.
func StartCluster(dir string) (*Cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	info := Info{BinDir: bin, UID: -1, GID: -1}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "weft-pgtest-"); err != nil {
			return nil, fmt.Errorf("pgtest: %w", err)
		}
		info.Temporary = true
	}
	info.Dir = dir
	c := &Cluster{info: info}
	if err := c.init(); err != nil {
		c.cleanup()
		return nil, err
	}
	// A port picked free may be taken before the server binds it: retry.
	for attempt := 0; ; attempt++ {
		if c.info.Port, err = freePort(); err != nil {
			c.cleanup()
			return nil, err
		}
		if err = c.start(); err == nil {
			break
		}
		if attempt == 4 {
			c.cleanup()
			return nil, err
		}
	}
	return c, nil
}

// Info describes the cluster.
func (c *Cluster) Info() Info { return c.info }

// DSN returns a postgres:// URL to database db as the superuser.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", superuser, c.info.Port, db)
}

// CreateDB creates a database; an empty name picks a new unique one.
func (c *Cluster) CreateDB(ctx context.Context, name string) (*DB, error) {
	if name == "" {
		name = fmt.Sprintf("t_%d_%d", os.Getpid(), c.dbSeq.Add(1))
	}
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return nil, fmt.Errorf("pgtest: connecting: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("pgtest: creating database %s: %w", name, err)
	}
	return &DB{Name: name, DSN: c.DSN(name), Cluster: c}, nil
}

// Stop stops the server (fast shutdown: connections are closed) and, for a
// temporary cluster, removes its files.
func (c *Cluster) Stop() error {
	err := c.stop()
	c.cleanup()
	return err
}

// Restart stops the server, closing every connection, and starts it again
// on the same port.
func (c *Cluster) Restart() error { return c.RestartAfter(0) }

// RestartAfter stops the server, closing every connection, leaves it down
// for d, and starts it again on the same port: an outage of at least d.
func (c *Cluster) RestartAfter(d time.Duration) error {
	if err := c.stop(); err != nil {
		return err
	}
	time.Sleep(d)
	return c.start()
}

func (c *Cluster) dataDir() string   { return filepath.Join(c.info.Dir, "data") }
func (c *Cluster) socketDir() string { return filepath.Join(c.info.Dir, "sock") }
func (c *Cluster) logFile() string   { return filepath.Join(c.info.Dir, "server.log") }

// init runs initdb, as the server's user when running as root.
func (c *Cluster) init() error {
	if os.Geteuid() == 0 {
		uid, gid, err := serverUser()
		if err != nil {
			return err
		}
		c.info.UID, c.info.GID = uid, gid
	}
	for _, d := range []string{c.info.Dir, c.socketDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		if c.info.UID >= 0 {
			if err := os.Chown(d, c.info.UID, c.info.GID); err != nil {
				return fmt.Errorf("pgtest: %w", err)
			}
		}
	}
	return c.run("initdb", "-D", c.dataDir(), "-U", superuser, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
}

// start starts the server and waits until it accepts connections.
func (c *Cluster) start() error {
	opts := fmt.Sprintf("-k %s -p %d -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
		c.socketDir(), c.info.Port)
	if err := c.run("pg_ctl", "start", "-D", c.dataDir(), "-l", c.logFile(), "-w", "-t", "60", "-o", opts); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.DSN("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgtest: server on port %d not ready: %w", c.info.Port, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop stops the server if it runs.
func (c *Cluster) stop() error {
	if _, err := os.Stat(filepath.Join(c.dataDir(), "postmaster.pid")); err != nil {
		return nil
	}
	return c.run("pg_ctl", "stop", "-D", c.dataDir(), "-m", "fast", "-w", "-t", "60")
}

func (c *Cluster) cleanup() {
	if c.info.Temporary {
		_ = os.RemoveAll(c.info.Dir)
	}
}

// run runs one of the server's programs as the server's user.
func (c *Cluster) run(prog string, args ...string) error {
	cmd := exec.Command(filepath.Join(c.info.BinDir, prog), args...)
	cmd.Dir = c.info.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	if c.info.UID >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Credential: &syscall.Credential{Uid: uint32(c.info.UID), Gid: uint32(c.info.GID)},
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if log, rerr := os.ReadFile(c.logFile()); rerr == nil && prog == "pg_ctl" {
			msg += "\nserver log:\n" + tail(string(log), 2000)
		}
		return fmt.Errorf("pgtest: %s %s: %w\n%s", prog, strings.Join(args, " "), err, msg)
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// serverUser returns the uid and gid of the "postgres" system user,
// creating the user if it does not exist.
func serverUser() (uid, gid int, err error) {
	u, err := user.Lookup(superuser)
	if err != nil {
		out, aerr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", superuser).CombinedOutput()
		if aerr != nil {
			return 0, 0, fmt.Errorf("pgtest: running as root and no %q user: useradd: %w: %s", superuser, aerr, out)
		}
		if u, err = user.Lookup(superuser); err != nil {
			return 0, 0, fmt.Errorf("pgtest: %w", err)
		}
	}
	if uid, err = strconv.Atoi(u.Uid); err != nil {
		return 0, 0, fmt.Errorf("pgtest: uid of %s: %w", superuser, err)
	}
	if gid, err = strconv.Atoi(u.Gid); err != nil {
		return 0, 0, fmt.Errorf("pgtest: gid of %s: %w", superuser, err)
	}
	return uid, gid, nil
}

// findBinaries returns the directory holding initdb, pg_ctl and postgres:
// initdb's on PATH (symlinks resolved), else the newest
// /usr/lib/postgresql/*/bin.
func findBinaries() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(r))
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
	dirs = append(dirs, matches...)
	for _, d := range dirs {
		ok := true
		for _, prog := range []string{"initdb", "pg_ctl", "postgres"} {
			if fi, err := os.Stat(filepath.Join(d, prog)); err != nil || fi.IsDir() {
				ok = false
				break
			}
		}
		if ok {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// freePort returns a TCP port on 127.0.0.1 free at the time of the call.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
