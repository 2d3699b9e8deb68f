// fattree.cc - the ns-3 side of `make bench-vs-ns3`: the fat-tree workload
// of docs/performance.md ("The workload") on ns-3 3.37 (Debian libns3-dev).
//
// A k-ary fat-tree (Al-Fares et al., SIGCOMM 2008, section 3.2) of
// point-to-point links, 100 Gb/s and 1 us each way, output queues of a
// million packets and no queue discs; host i sends SIZE bytes of UDP
// payload in 4096-byte datagrams to host i + H/2 at line rate, all from
// t = 0. Routing is destination-mod-k, looked up in O(1): an edge switch
// sends up to aggregation switch dst mod k/2, an aggregation switch up to
// core (dst / (k/2)) mod k/2, and down by destination, the same paths as
// rdmasim's `routing: dmodk`, so every directed link carries one flow.
//
// Prints one line of key=value: datagrams delivered, packet-hops (link
// transmissions, counted on PhyTxEnd), events executed, the arrival time
// of the last datagram in picoseconds, and the drops (expected 0).
//
// usage: fattree --k=K --bytes=BYTES
#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

namespace {

const uint32_t kPayload = 4096; // UDP payload per datagram, RoCE MTU sized

// Which node a switch is and where each destination goes from it.
struct Place {
    enum Role { HOST, EDGE, AGG, CORE } role;
    uint32_t index; // within its role
};

struct Counters {
    uint64_t hops = 0;
    uint64_t delivered = 0;
    uint64_t drops = 0;
    Time last;
};

// Destination-mod-k forwarding with the routes built beforehand: one
// Ipv4Route per output port of the node, picked by arithmetic on the
// destination host's index (looked up from its address in a hash map).
class DmodkRouting : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("rdmasim::DmodkRouting").SetParent<Ipv4RoutingProtocol>();
        return tid;
    }

    DmodkRouting(Place place, uint32_t half, const std::unordered_map<uint32_t, uint32_t>* hostOf)
        : m_place(place), m_half(half), m_hostOf(hostOf)
    {
    }

    // The route out of the node's port `port` (in the order its links were made).
    void AddPort(Ptr<NetDevice> dev, Ipv4Address self, Ipv4Address peer)
    {
        Ptr<Ipv4Route> r = Create<Ipv4Route>();
        r->SetOutputDevice(dev);
        r->SetSource(self);
        r->SetGateway(peer);
        m_ports.push_back(r);
    }

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet>, const Ipv4Header& header, Ptr<NetDevice>,
                               Socket::SocketErrno& err) override
    {
        Ptr<Ipv4Route> r = Lookup(header.GetDestination());
        err = r ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
        return r;
    }

    bool RouteInput(Ptr<const Packet> p, const Ipv4Header& header, Ptr<const NetDevice> idev,
                    UnicastForwardCallback ucb, MulticastForwardCallback, LocalDeliverCallback lcb,
                    ErrorCallback) override
    {
        if (m_place.role == Place::HOST) {
            lcb(p, header, m_ipv4->GetInterfaceForDevice(idev));
            return true;
        }
        Ptr<Ipv4Route> r = Lookup(header.GetDestination());
        if (!r)
            return false;
        ucb(r, p, header);
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void SetIpv4(Ptr<Ipv4> ipv4) override { m_ipv4 = ipv4; }
    void PrintRoutingTable(Ptr<OutputStreamWrapper>, Time::Unit) const override {}

  private:
    // Port numbering, as the links are made in main(): an edge switch has
    // its k/2 up-links first, then its k/2 hosts; an aggregation switch
    // its k/2 core links, then its pod's k/2 edge switches; a core one
    // link per pod; a host one link.
    Ptr<Ipv4Route> Lookup(Ipv4Address dst) const
    {
        auto it = m_hostOf->find(dst.Get());
        if (it == m_hostOf->end())
            return nullptr;
        uint32_t d = it->second, h = m_half;
        switch (m_place.role) {
        case Place::HOST:
            return m_ports[0];
        case Place::EDGE:
            return d / h == m_place.index ? m_ports[h + d % h] : m_ports[d % h];
        case Place::AGG:
            return d / (h * h) == m_place.index / h ? m_ports[h + d / h % h] : m_ports[d / h % h];
        case Place::CORE:
            return m_ports[d / (h * h)];
        }
        return nullptr;
    }

    Place m_place;
    uint32_t m_half;
    const std::unordered_map<uint32_t, uint32_t>* m_hostOf;
    Ptr<Ipv4> m_ipv4;
    std::vector<Ptr<Ipv4Route>> m_ports;
};

} // namespace

int main(int argc, char** argv)
{
    Time::SetResolution(Time::PS); // 4126 bytes at 100 Gb/s: 330.08 ns exactly
    uint32_t k = 4;
    uint64_t bytes = 10 * 1048576;
    CommandLine cmd;
    cmd.AddValue("k", "ports per switch (even)", k);
    cmd.AddValue("bytes", "UDP payload bytes per flow", bytes);
    cmd.Parse(argc, argv);
    const uint32_t h = k / 2, hosts = k * k * k / 4;

    NodeContainer host, edge, agg, core;
    host.Create(hosts);
    edge.Create(k * h);
    agg.Create(k * h);
    core.Create(h * h);
    InternetStackHelper stack;
    stack.Install(host);
    stack.Install(edge);
    stack.Install(agg);
    stack.Install(core);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("100Gbps"));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(9000));
    p2p.SetChannelAttribute("Delay", StringValue("1us"));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000000p"));

    // Every link is its own /30; ports are recorded in the order
    // DmodkRouting expects.
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    struct End {
        Ptr<Node> node;
        Ptr<NetDevice> dev;
        Ipv4Address self, peer;
    };
    std::vector<std::vector<End>> ports(hosts + 2 * k * h + h * h);
    auto id = [&](Ptr<Node> n) { return n->GetId(); };
    TrafficControlHelper tc;
    auto link = [&](Ptr<Node> a, Ptr<Node> b) {
        NetDeviceContainer d = p2p.Install(a, b);
        Ipv4InterfaceContainer i = addr.Assign(d);
        addr.NewNetwork();
        tc.Uninstall(d); // no queue disc: the device's own queue only
        ports[id(a)].push_back({a, d.Get(0), i.GetAddress(0), i.GetAddress(1)});
        ports[id(b)].push_back({b, d.Get(1), i.GetAddress(1), i.GetAddress(0)});
    };
    for (uint32_t e = 0; e < k * h; e++) // edge up-links, then its hosts
        for (uint32_t j = 0; j < h; j++)
            link(edge.Get(e), agg.Get(e / h * h + j));
    for (uint32_t a = 0; a < k * h; a++) // aggregation up-links
        for (uint32_t c = 0; c < h; c++)
            link(agg.Get(a), core.Get(a % h * h + c));
    for (uint32_t i = 0; i < hosts; i++)
        link(host.Get(i), edge.Get(i / h));
    // aggregation switches' down-links come after their core links: make
    // them in that order by moving the edge links (made first) to the end
    for (uint32_t a = 0; a < k * h; a++) {
        auto& v = ports[id(agg.Get(a))];
        std::rotate(v.begin(), v.begin() + h, v.end());
    }
    // cores: one link per pod, in pod order already

    std::unordered_map<uint32_t, uint32_t> hostOf;
    for (uint32_t i = 0; i < hosts; i++)
        hostOf[ports[id(host.Get(i))][0].self.Get()] = i;
    auto install = [&](NodeContainer& nc, Place::Role role) {
        for (uint32_t i = 0; i < nc.GetN(); i++) {
            Ptr<DmodkRouting> r = CreateObject<DmodkRouting>(Place{role, i}, h, &hostOf);
            for (const End& e : ports[id(nc.Get(i))])
                r->AddPort(e.dev, e.self, e.peer);
            nc.Get(i)->GetObject<Ipv4>()->SetRoutingProtocol(r);
        }
    };
    install(host, Place::HOST);
    install(edge, Place::EDGE);
    install(agg, Place::AGG);
    install(core, Place::CORE);

    Counters count;
    for (auto& v : ports)
        for (End& e : v) {
            Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(e.dev);
            dev->TraceConnectWithoutContext(
                "PhyTxEnd", MakeBoundCallback(+[](Counters* c, Ptr<const Packet>) { c->hops++; }, &count));
            dev->TraceConnectWithoutContext(
                "MacTxDrop", MakeBoundCallback(+[](Counters* c, Ptr<const Packet>) { c->drops++; }, &count));
        }

    const uint64_t datagrams = (bytes + kPayload - 1) / kPayload;
    // 4096 + 8 (UDP) + 20 (IPv4) + 2 (PPP) bytes at 100 Gb/s
    const Time interval = PicoSeconds((kPayload + 30) * 8 * 10);
    for (uint32_t i = 0; i < hosts; i++) {
        uint32_t dst = (i + hosts / 2) % hosts;
        UdpServerHelper server(9);
        ApplicationContainer s = server.Install(host.Get(i));
        s.Start(Seconds(0));
        s.Get(0)->TraceConnectWithoutContext(
            "Rx", MakeBoundCallback(+[](Counters* c, Ptr<const Packet>) {
                c->delivered++;
                c->last = Simulator::Now();
            }, &count));
        UdpClientHelper client(ports[id(host.Get(dst))][0].self, 9);
        client.SetAttribute("MaxPackets", UintegerValue(datagrams));
        client.SetAttribute("Interval", TimeValue(interval));
        client.SetAttribute("PacketSize", UintegerValue(kPayload));
        ApplicationContainer c = client.Install(host.Get(i));
        c.Start(Seconds(0));
    }

    Simulator::Run();
    std::printf("packets=%llu hops=%llu events=%llu last_ps=%lld drops=%llu\n",
                (unsigned long long)count.delivered, (unsigned long long)count.hops,
                (unsigned long long)Simulator::GetEventCount(), (long long)count.last.GetPicoSeconds(),
                (unsigned long long)count.drops);
    Simulator::Destroy();
    return 0;
}
