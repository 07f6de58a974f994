/**
 * Writes a small IPv4 MaxMind DB file (format 2.0, 24-bit records) for tests, so the GeoIP
 * adapter reads a real `.mmdb` through the real reader without shipping a GeoLite database.
 * Supports what City records use: maps, UTF-8 strings and unsigned integers.
 */
type Value = string | number | { [key: string]: Value } | Value[];

export interface MmdbNetwork {
  /** e.g. "203.0.113.0/24" */
  cidr: string;
  data: { [key: string]: Value };
}

export function buildMmdb(networks: MmdbNetwork[], databaseType = 'GeoLite2-City'): Buffer {
  // The search tree: node 0 is the root; each node has [left, right] children, a node index,
  // a data index ({ data: i }) or null (no data).
  type Child = number | { data: number } | null;
  const nodes: [Child, Child][] = [[null, null]];
  networks.forEach((network, dataIndex) => {
    const [address, bitsText] = network.cidr.split('/');
    const bits = Number(bitsText);
    const value = address.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
    let node = 0;
    for (let depth = 0; depth < bits; depth++) {
      const bit = Math.floor(value / 2 ** (31 - depth)) % 2;
      if (depth === bits - 1) {
        nodes[node][bit] = { data: dataIndex };
      } else {
        let next = nodes[node][bit];
        if (typeof next !== 'number') {
          nodes.push([null, null]);
          next = nodes.length - 1;
          nodes[node][bit] = next;
        }
        node = next;
      }
    }
  });

  const dataOffsets: number[] = [];
  const dataParts: Buffer[] = [];
  let dataLength = 0;
  for (const network of networks) {
    const encoded = encode(network.data);
    dataOffsets.push(dataLength);
    dataParts.push(encoded);
    dataLength += encoded.length;
  }

  const nodeCount = nodes.length;
  const record = (child: Child): number => {
    if (child === null) return nodeCount;
    if (typeof child === 'number') return child;
    return nodeCount + 16 + dataOffsets[child.data];
  };
  const tree = Buffer.alloc(nodeCount * 6);
  nodes.forEach(([left, right], i) => {
    tree.writeUIntBE(record(left), i * 6, 3);
    tree.writeUIntBE(record(right), i * 6 + 3, 3);
  });

  const metadata = encode({
    node_count: nodeCount,
    record_size: 24,
    ip_version: 4,
    database_type: databaseType,
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1764028800,
    description: { en: 'test database' },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...dataParts, Buffer.from('ABCDEF4D61784D696E642E636F6D', 'hex'), metadata]);
}

function control(type: number, size: number): Buffer {
  if (size >= 29) throw new Error('test mmdb writer: sizes up to 28 only');
  // Types above 7 are "extended": type 0 in the control byte, then (type - 7) in the next byte.
  return type <= 7 ? Buffer.from([(type << 5) | size]) : Buffer.from([size, type - 7]);
}

function encode(value: Value): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, bytes.length), bytes]);
  }
  if (typeof value === 'number') {
    // uint32 (type 6), big-endian without leading zero bytes.
    const bytes: number[] = [];
    for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
    return Buffer.concat([control(6, bytes.length), Buffer.from(bytes)]);
  }
  if (Array.isArray(value)) {
    return Buffer.concat([control(11, value.length), ...value.map(encode)]);
  }
  const entries = Object.entries(value);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v)])]);
}
