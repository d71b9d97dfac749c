// Command upstream runs one of upstream's node controllers against a real API server, wired as
// their own managers wire them, for the side-by-side benchmark (bench/upstream.bench.ts):
//
//	upstream --kubeconfig K --controller cloud-node --inventory cloud.json [--workers 1] [--qps 20] [--burst 30]
//	upstream --kubeconfig K --controller node-ipam --cluster-cidr C --node-cidr-mask-size N [--service-cidr S]
//
// cloud-node: k8s.io/cloud-provider's controllers/node.NewCloudNodeController and RunWithContext,
// as the cloud-controller-manager starts it (k8s.io/cloud-provider/app's startCloudNodeController:
// a shared informer factory, the controller's own client, --concurrent-node-syncs workers,
// --node-status-update-frequency), over upstream's own fake cloud (k8s.io/cloud-provider/fake)
// whose OverrideInstanceMetadata answers from the same JSON inventory the project's static
// provider reads (`{"nodes": {"<name>": {"providerID", "instanceType", "zone", "region",
// "addresses"}}}`); a node the inventory lacks is cloudprovider.InstanceNotFound.
//
// node-ipam: k8s.io/kubernetes' pkg/controller/nodeipam.NewNodeIpamController with the
// RangeAllocator and no cloud, as kube-controller-manager 1.35 starts it (cmd/kube-controller-manager/app/core.go,
// newNodeIpamController), and RunWithMetrics.
//
// Clients are built as both managers build them: protobuf, --kube-api-qps/--kube-api-burst per
// client (each controller and the informers get their own), and a user agent naming the
// controller. Nothing here decides anything about a node: every decision is upstream's code.
//
// Prints JSON lines on stdout: {"msg":"started"}, then {"msg":"caches synced","ms":...} once the
// node informer has synced. Logs (klog) go to stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	cloudprovider "k8s.io/cloud-provider"
	nodecontroller "k8s.io/cloud-provider/controllers/node"
	fakecloud "k8s.io/cloud-provider/fake"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/nodeipam"
	"k8s.io/kubernetes/pkg/controller/nodeipam/ipam"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "upstream: %v\n", err)
		os.Exit(1)
	}
}

type inventoryEntry struct {
	ProviderID   string           `json:"providerID"`
	InstanceType string           `json:"instanceType"`
	Zone         string           `json:"zone"`
	Region       string           `json:"region"`
	Addresses    []v1.NodeAddress `json:"addresses"`
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the controller's user (required)")
	controller := flag.String("controller", "", "cloud-node or node-ipam (required)")
	inventory := flag.String("inventory", "", "cloud-node: the JSON inventory the fake cloud answers from")
	workers := flag.Int("workers", 1, "cloud-node: --concurrent-node-syncs (the cloud-controller-manager's default: 1)")
	statusFrequency := flag.Duration("node-status-update-frequency", 5*time.Minute, "cloud-node: --node-status-update-frequency")
	qps := flag.Float64("qps", 20, "--kube-api-qps per client (both managers' default: 20; negative: no limit)")
	burst := flag.Int("burst", 30, "--kube-api-burst per client (both managers' default: 30)")
	contentType := flag.String("content-type", "application/vnd.kubernetes.protobuf", "--kube-api-content-type (both managers' default: protobuf)")
	clusterCIDR := flag.String("cluster-cidr", "", "node-ipam: --cluster-cidr")
	maskSize := flag.Int("node-cidr-mask-size", 24, "node-ipam: --node-cidr-mask-size (one family)")
	serviceCIDR := flag.String("service-cidr", "", "node-ipam: --service-cluster-ip-range's first range, if any")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" || *controller == "" {
		return errors.New("--kubeconfig and --controller are required")
	}

	base, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	base.QPS = float32(*qps)
	base.Burst = *burst
	base.ContentType = *contentType
	base.AcceptContentTypes = *contentType + ",application/json"
	// One client per user, as the managers' client builders make them (each its own rate limiter).
	clientFor := func(name string) (kubernetes.Interface, error) {
		cfg := rest.CopyConfig(base)
		cfg.UserAgent = "upstream-" + *controller + "/" + name
		return kubernetes.NewForConfig(cfg)
	}
	informerClient, err := clientFor("shared-informers")
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	emit(map[string]any{"msg": "started"})
	started := time.Now()

	// The managers' informer factory: a resync of 12 h or more (ResyncPeriod's minimum), so none in a run.
	factory := informers.NewSharedInformerFactory(informerClient, 12*time.Hour)
	nodes := factory.Core().V1().Nodes()

	switch *controller {
	case "cloud-node":
		cloud, err := fakeCloud(*inventory)
		if err != nil {
			return err
		}
		client, err := clientFor("cloud-node-controller")
		if err != nil {
			return err
		}
		cnc, err := nodecontroller.NewCloudNodeController(nodes, client, cloud, *statusFrequency, int32(*workers))
		if err != nil {
			return err
		}
		factory.Start(ctx.Done())
		go cnc.RunWithContext(ctx, controllersmetrics.NewControllerManagerMetrics("cloud-controller-manager"))
	case "node-ipam":
		_, cidr, err := net.ParseCIDR(*clusterCIDR)
		if err != nil {
			return fmt.Errorf("--cluster-cidr: %w", err)
		}
		var service *net.IPNet
		if *serviceCIDR != "" {
			if _, service, err = net.ParseCIDR(*serviceCIDR); err != nil {
				return fmt.Errorf("--service-cidr: %w", err)
			}
		}
		client, err := clientFor("node-controller")
		if err != nil {
			return err
		}
		// NewNodeIpamController lists every node (ipam.New's listNodes, one unpaginated LIST) before
		// the informer starts, as in kube-controller-manager.
		ic, err := nodeipam.NewNodeIpamController(ctx, nodes, nil, client, []*net.IPNet{cidr}, service, nil, []int{*maskSize}, ipam.RangeAllocatorType)
		if err != nil {
			return err
		}
		factory.Start(ctx.Done())
		go ic.RunWithMetrics(ctx, controllersmetrics.NewControllerManagerMetrics("kube-controller-manager"))
	default:
		return fmt.Errorf("--controller: %q is neither cloud-node nor node-ipam", *controller)
	}

	go func() {
		for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return
			}
		}
		emit(map[string]any{"msg": "caches synced", "ms": time.Since(started).Milliseconds()})
	}()
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

// fakeCloud is upstream's fake cloud with InstancesV2 on, answering InstanceMetadata for each node
// from the inventory by node name.
func fakeCloud(path string) (*fakecloud.Cloud, error) {
	if path == "" {
		return nil, errors.New("cloud-node needs --inventory")
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file struct {
		Nodes map[string]*inventoryEntry `json:"nodes"`
	}
	if err := json.Unmarshal(text, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &fakecloud.Cloud{
		EnableInstancesV2: true,
		OverrideInstanceMetadata: func(_ context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
			e, ok := file.Nodes[node.Name]
			if !ok || e == nil {
				return nil, cloudprovider.InstanceNotFound
			}
			return &cloudprovider.InstanceMetadata{
				ProviderID:    e.ProviderID,
				InstanceType:  e.InstanceType,
				NodeAddresses: append([]v1.NodeAddress(nil), e.Addresses...),
				Zone:          e.Zone,
				Region:        e.Region,
			}, nil
		},
	}, nil
}

func emit(msg map[string]any) {
	msg["time"] = time.Now().UnixMilli()
	line, _ := json.Marshal(msg)
	fmt.Println(strings.TrimSpace(string(line)))
}
