// Command benchnodes is the side-by-side benchmark's own client of the API server (bench/upstream.bench.ts):
// it creates the benchmark's Nodes, and watches them until the controller under test is done. It
// runs in its own process, speaking protobuf, so that its work is neither the controller's nor in
// the controller's figures.
//
//	benchnodes fill --kubeconfig K --file nodes.jsonl [--concurrency 16]
//	    creates each Node of the file (one JSON object a line), as kubelets register them;
//	    prints {"created":N,"ms":...}
//	benchnodes watch --kubeconfig K --want initialised|pod-cidrs --targets names.txt
//	    follows every Node (an informer) and prints {"msg":"synced",...} once listed, then
//	    {"msg":"progress","done":n,...} each second and {"msg":"complete","time":<unix ms>} when
//	    every node named in the targets file is done: no node.cloudprovider.kubernetes.io/uninitialized
//	    taint (initialised) or spec.podCIDRs set (pod-cidrs). "unexpected" counts nodes not among the
//	    targets that became done (an unsatisfiable node initialised).
//	benchnodes lease --kubeconfig K --namespace NS --name NAME [--duration 15s] [--renew 2s]
//	    a leader that does nothing: takes the Lease as "bench-holder" and renews it until SIGTERM,
//	    printing {"renewed":<unix ms>} after each renewal; then exits without releasing it, as a
//	    leader that dies does, so that a follower takes over once it expires.
//	benchnodes metric --kubeconfig K --name NAME [--match TEXT]
//	    the sum of one metric of the API server's /metrics over its label sets (those whose line
//	    holds TEXT): {"name":..., "value":...}
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	cloudapi "k8s.io/cloud-provider/api"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchnodes fill|watch [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "fill":
		err = fill(os.Args[2:])
	case "watch":
		err = watch(os.Args[2:])
	case "lease":
		err = lease(os.Args[2:])
	case "metric":
		err = metric(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchnodes: %v\n", err)
		os.Exit(1)
	}
}

func client(kubeconfig, agent string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = agent
	return kubernetes.NewForConfig(cfg)
}

func emit(msg map[string]any) {
	if _, ok := msg["time"]; !ok {
		msg["time"] = time.Now().UnixMilli()
	}
	line, _ := json.Marshal(msg)
	fmt.Println(string(line))
}

func fill(args []string) error {
	fs := flag.NewFlagSet("fill", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	file := fs.String("file", "", "Nodes, one JSON object a line")
	concurrency := fs.Int("concurrency", 16, "creates in flight")
	_ = fs.Parse(args)
	// The user agent of a kubelet, so that the managedFields of each Node name the kubelet as its writer.
	c, err := client(*kubeconfig, "kubelet/v1.35.4 (linux/amd64) kubernetes")
	if err != nil {
		return err
	}
	f, err := os.Open(*file)
	if err != nil {
		return err
	}
	defer f.Close()
	started := time.Now()
	work := make(chan *v1.Node, *concurrency)
	var created atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for i := 0; i < *concurrency; i++ {
		wg.Go(func() {
			for n := range work {
				for attempt := 0; ; attempt++ {
					_, err := c.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
					if err == nil || apierrors.IsAlreadyExists(err) {
						created.Add(1)
						break
					}
					if attempt < 5 && (apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsTimeout(err)) {
						time.Sleep(time.Second)
						continue
					}
					once.Do(func() { firstErr = fmt.Errorf("create %s: %w", n.Name, err) })
					break
				}
			}
		})
	}
	in := bufio.NewScanner(f)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	for in.Scan() {
		n := &v1.Node{}
		if err := json.Unmarshal(in.Bytes(), n); err != nil {
			close(work)
			wg.Wait()
			return err
		}
		work <- n
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := in.Err(); err != nil {
		return err
	}
	emit(map[string]any{"created": created.Load(), "ms": time.Since(started).Milliseconds()})
	return nil
}

// state is what the watcher keeps of a Node: whether it is done.
type state struct {
	initialised bool
	podCIDRs    bool
}

func watch(args []string) error {
	fs := flag.NewFlagSet("watch", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	want := fs.String("want", "initialised", "initialised or pod-cidrs")
	targetsFile := fs.String("targets", "", "the names of the nodes that must become done, one a line")
	_ = fs.Parse(args)
	if *want != "initialised" && *want != "pod-cidrs" {
		return fmt.Errorf("--want: %q", *want)
	}
	text, err := os.ReadFile(*targetsFile)
	if err != nil {
		return err
	}
	targets := map[string]bool{}
	for _, name := range strings.Fields(string(text)) {
		targets[name] = true
	}
	if len(targets) == 0 {
		return errors.New("no targets")
	}
	c, err := client(*kubeconfig, "benchnodes-watch")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	var mu sync.Mutex
	doneNodes := map[string]bool{}
	unexpected := map[string]bool{}
	complete := false
	isDone := func(n *v1.Node) bool {
		if *want == "pod-cidrs" {
			return len(n.Spec.PodCIDRs) > 0
		}
		for _, t := range n.Spec.Taints {
			if t.Key == cloudapi.TaintExternalCloudProvider {
				return false
			}
		}
		return true
	}
	observe := func(obj any) {
		n, ok := obj.(*v1.Node)
		if !ok {
			return
		}
		d := isDone(n)
		mu.Lock()
		defer mu.Unlock()
		if targets[n.Name] {
			if d {
				doneNodes[n.Name] = true
			} else {
				delete(doneNodes, n.Name)
			}
		} else if d {
			unexpected[n.Name] = true
		}
		if !complete && len(doneNodes) == len(targets) {
			complete = true
			emit(map[string]any{"msg": "complete", "done": len(doneNodes), "unexpected": len(unexpected)})
		}
	}
	factory := informers.NewSharedInformerFactory(c, 0)
	informer := factory.Core().V1().Nodes().Informer()
	// Only what the check reads is kept: the watcher holds N small objects, not N Nodes.
	_ = informer.SetTransform(func(obj any) (any, error) {
		n, ok := obj.(*v1.Node)
		if !ok {
			return obj, nil
		}
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion, UID: n.UID}, Spec: v1.NodeSpec{Taints: n.Spec.Taints, PodCIDRs: n.Spec.PodCIDRs}}, nil
	})
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: observe, UpdateFunc: func(_, n any) { observe(n) }}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return ctx.Err()
	}
	mu.Lock()
	emit(map[string]any{"msg": "synced", "done": len(doneNodes), "targets": len(targets), "unexpected": len(unexpected)})
	mu.Unlock()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			factory.Shutdown()
			return nil
		case <-ticker.C:
			mu.Lock()
			emit(map[string]any{"msg": "progress", "done": len(doneNodes), "unexpected": len(unexpected)})
			mu.Unlock()
		}
	}
}

func lease(args []string) error {
	fs := flag.NewFlagSet("lease", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	namespace := fs.String("namespace", "kube-system", "the lease's namespace")
	name := fs.String("name", "", "the lease's name")
	duration := fs.Duration("duration", 15*time.Second, "leaseDurationSeconds")
	renew := fs.Duration("renew", 2*time.Second, "how often to renew")
	_ = fs.Parse(args)
	if *name == "" {
		return errors.New("lease: --name is required")
	}
	c, err := client(*kubeconfig, "benchnodes-lease")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	leases := c.CoordinationV1().Leases(*namespace)
	holder := "bench-holder"
	seconds := int32(duration.Seconds())
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: *name, Namespace: *namespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	emit(map[string]any{"renewed": now.UnixMilli()})
	ticker := time.NewTicker(*renew)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			now := metav1.NewMicroTime(time.Now())
			l.Spec.RenewTime = &now
			if l, err = leases.Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
				return err
			}
			emit(map[string]any{"renewed": now.UnixMilli()})
		}
	}
}

func metric(args []string) error {
	fs := flag.NewFlagSet("metric", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	name := fs.String("name", "", "the metric")
	match := fs.String("match", "", "only label sets whose line holds this text")
	_ = fs.Parse(args)
	c, err := client(*kubeconfig, "benchnodes-metric")
	if err != nil {
		return err
	}
	text, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		return err
	}
	sum := 0.0
	for _, line := range strings.Split(string(text), "\n") {
		if !(strings.HasPrefix(line, *name+"{") || strings.HasPrefix(line, *name+" ")) || !strings.Contains(line, *match) {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &v); err == nil {
			sum += v
		}
	}
	emit(map[string]any{"name": *name, "value": sum})
	return nil
}
