// Command controlplane runs upstream's etcd and kube-apiserver in one process on loopback, for the
// project's real-server test tier and its side-by-side benchmarks. Both are upstream's own code
// from the Go modules pinned in go.sum (go.etcd.io/etcd/server/v3's embed package, and
// k8s.io/kubernetes/cmd/kube-apiserver/app, the same command the release binary runs); nothing of
// either is re-created here. What this file adds is the wiring a test needs: certificates, free
// ports, a kubeconfig written once /readyz answers, and a clean stop on SIGTERM.
//
//	controlplane --dir STATE [--port N] [--service-cidr A,B] [--audit-policy FILE] [--client-users a,b] [-- extra kube-apiserver flags]
//
// Prints one JSON line on stdout when the server is ready: {"server":..., "kubeconfig":..., "pid":...}.
// --client-users: one more client certificate per name (CN the name, group system:masters) and a
// kubeconfig for it, STATE/<name>.kubeconfig, so that an audit policy can tell clients apart.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap/zapcore"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "controlplane: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "state folder: certificates, etcd data, kubeconfig, audit log (required)")
	port := flag.Int("port", 0, "the API server's secure port on 127.0.0.1 (0: a free one)")
	serviceCIDR := flag.String("service-cidr", "10.96.0.0/16,fd00:10:96::/112", "--service-cluster-ip-range")
	auditPolicy := flag.String("audit-policy", "", "an audit policy file; the log goes to STATE/audit.log")
	clientUsers := flag.String("client-users", "", "comma-separated user names: a client certificate (group system:masters) and STATE/<name>.kubeconfig each")
	flag.Parse()
	if *dir == "" {
		return errors.New("--dir is required")
	}
	stateDir, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	certs := pki{dir: filepath.Join(stateDir, "pki")}
	if err := certs.ensure(); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	var users []string
	for _, name := range strings.Split(*clientUsers, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if err := certs.ensureClient(name, []string{"system:masters"}); err != nil {
			return fmt.Errorf("certificates for %s: %w", name, err)
		}
		users = append(users, name)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	etcdURL, closeEtcd, err := startEtcd(filepath.Join(stateDir, "etcd"))
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer closeEtcd()

	securePort := *port
	if securePort == 0 {
		if securePort, err = freePort(); err != nil {
			return err
		}
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(securePort),
		"--tls-cert-file=" + certs.path("apiserver.crt"),
		"--tls-private-key-file=" + certs.path("apiserver.key"),
		"--client-ca-file=" + certs.path("ca.crt"),
		"--authorization-mode=Node,RBAC",
		// The default admission plugins, plus NodeRestriction as kubeadm and every managed
		// offering run it: a kubelet credential then can change only its own Node.
		"--enable-admission-plugins=NodeRestriction",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + certs.path("sa.pub"),
		"--service-account-signing-key-file=" + certs.path("sa.key"),
		"--api-audiences=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + *serviceCIDR,
		"--allow-privileged=true",
		"--profiling=false",
		// The advertised address is loopback, which the kubernetes Service's Endpoints refuse.
		"--endpoint-reconciler-type=none",
		// A test's stop should not wait out the default 60 s of in-flight draining.
		"--shutdown-delay-duration=0s",
		"--shutdown-send-retry-after=false",
		"--cert-dir=" + filepath.Join(stateDir, "serving"),
	}
	if *auditPolicy != "" {
		args = append(args,
			"--audit-policy-file="+*auditPolicy,
			"--audit-log-path="+filepath.Join(stateDir, "audit.log"),
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
			// Never rotated in a test: the log writer (lumberjack) reads 0 as its default, 100 MB,
			// and a 50,000-node benchmark writes more than that.
			"--audit-log-maxsize=1048576",
		)
	}
	args = append(args, flag.Args()...)

	kubeconfig := filepath.Join(stateDir, "admin.kubeconfig")
	server := "https://127.0.0.1:" + strconv.Itoa(securePort)
	if err := writeKubeconfig(kubeconfig, server, certs, "admin", "test-admin"); err != nil {
		return err
	}
	for _, name := range users {
		if err := writeKubeconfig(filepath.Join(stateDir, name+".kubeconfig"), server, certs, name, name); err != nil {
			return err
		}
	}

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(args)
	served := make(chan error, 1)
	go func() { served <- cmd.ExecuteContext(ctx) }()

	if err := waitReady(ctx, server, certs, served); err != nil {
		return err
	}
	line, _ := json.Marshal(map[string]any{"server": server, "kubeconfig": kubeconfig, "pid": os.Getpid(), "etcd": etcdURL})
	fmt.Println(string(line))

	select {
	case err := <-served:
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("kube-apiserver: %w", err)
		}
	case <-ctx.Done():
		select {
		case <-served:
		case <-time.After(20 * time.Second):
			return errors.New("kube-apiserver did not stop within 20 s of the signal")
		}
	}
	return nil
}

// startEtcd runs etcd embedded on a free loopback port; fsync is off, as for every test etcd:
// the data folder is thrown away with the test.
func startEtcd(dataDir string) (string, func(), error) {
	clientPort, err := freePort()
	if err != nil {
		return "", nil, err
	}
	peerPort, err := freePort()
	if err != nil {
		return "", nil, err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dataDir
	cfg.Name = "controlplane"
	clientURL, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(clientPort))
	peerURL, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(peerPort))
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.Name + "=" + peerURL.String()
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = zapcore.ErrorLevel.String()
	cfg.QuotaBackendBytes = 8 << 30
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return "", nil, errors.New("etcd was not ready within 60 s")
	}
	return clientURL.String(), e.Close, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls /readyz with the admin's certificate until it answers 200.
func waitReady(ctx context.Context, server string, certs pki, served <-chan error) error {
	ca, err := os.ReadFile(certs.path("ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	clientCert, err := tls.LoadX509KeyPair(certs.path("admin.crt"), certs.path("admin.key"))
	if err != nil {
		return err
	}
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{clientCert}}},
	}
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-served:
			return fmt.Errorf("kube-apiserver exited before it was ready: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := client.Get(server + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("kube-apiserver's /readyz did not answer 200 within 120 s")
}

// writeKubeconfig writes a kubeconfig for the client certificate `cert` (<cert>.crt, <cert>.key).
func writeKubeconfig(path, server string, certs pki, cert, user string) error {
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: controlplane
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %[5]s
  user:
    client-certificate: %[3]s
    client-key: %[4]s
contexts:
- name: controlplane
  context:
    cluster: controlplane
    user: %[5]s
current-context: controlplane
`, server, certs.path("ca.crt"), certs.path(cert+".crt"), certs.path(cert+".key"), user)
	return os.WriteFile(path, []byte(text), 0o600)
}
