"""How much of the internet a list of control-plane authorized networks lets in. Standard
library only: the config layer refuses with it and the policy pack (its own small virtualenv)
judges what GKE receives with it, so the two cannot disagree.

An authorized network exists to name the few networks that need the public IP endpoint. A
list that covers the internet in pieces (0.0.0.0/1 and 128.0.0.0/1) is as open as 0.0.0.0/0,
so the measure is the public address space the whole list covers, not each block's spelling."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence

# At most one /8 of public IPv4 space (16.7 million addresses), or one /32 of IPv6, in total:
# far above a corporate egress range or Google's IAP range (35.235.240.0/20), far below "anyone".
PUBLIC_ADDRESSES_MAX = {4: 2**24, 6: 2**96}

# GKE: "Public clusters can have up to 50 authorized network CIDR ranges; private clusters can
# have up to 100" (https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks,
# Limitations).
BLOCKS_MAX = {False: 50, True: 100}


def _public_addresses(nets: Sequence[ipaddress.IPv4Network | ipaddress.IPv6Network], version: int) -> int:
    mine = [n for n in nets if n.version == version]
    total = 0
    for net in ipaddress.collapse_addresses(mine):  # type: ignore[type-var]
        # Private, shared and link-local space is not the internet; subtract what of it the
        # block contains (is_private covers RFC 1918, RFC 4193 and the other special ranges).
        if net.is_private:
            continue
        total += net.num_addresses
        for special in _SPECIAL[version]:
            if special.subnet_of(net):
                total -= special.num_addresses
    return total


_SPECIAL = {
    4: [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16")],
    6: [ipaddress.ip_network(n) for n in ("fc00::/7", "fe80::/10", "::1/128")],
}


def problems(cidrs: Sequence[str], private_nodes: bool) -> Iterator[tuple[int | None, str]]:
    """(index of the block or None for the list, message) for each way the list is too open,
    repeats a block, or exceeds what GKE accepts. Unparseable blocks are the caller's to report."""
    nets = []
    seen: dict[str, int] = {}
    for i, cidr in enumerate(cidrs):
        try:
            net = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            continue
        if str(net) in seen:
            yield i, f"{cidr} is listed already (masterAuthorizedNetworks[{seen[str(net)]}])"
        seen.setdefault(str(net), i)
        nets.append(net)
    limit = BLOCKS_MAX[private_nodes]
    if len(cidrs) > limit:
        kind = "private" if private_nodes else "public"
        yield None, f"{len(cidrs)} authorized networks; GKE accepts at most {limit} on a cluster with {kind} nodes"
    for version, most in PUBLIC_ADDRESSES_MAX.items():
        covered = _public_addresses(nets, version)
        if covered > most:
            width = "a /8" if version == 4 else "a /32"
            yield None, (
                f"the authorized networks cover {covered:,} public IPv{version} addresses, more than {width}: "
                "the public IP endpoint would be open to much of the internet; list the networks that need it, "
                "or reach the control plane through the DNS endpoint"
            )
