/**
 * What a switching fabric is built from, as the catalogue holds it: the devices' ports and the
 * route servers of the exchange LANs. The database reads it (db/repositories/fabric-catalogue-
 * repository.ts); a driver that builds its devices from the catalogue (the ovs driver) is handed it.
 */

/** A port of a device of the catalogue, with its speed and the metro area network of its PoP. */
export interface FabricPortRow {
  device: string;
  name: string;
  speed: number;
  network: string;
}

/** A route server of the catalogue (a network feature) with its exchange LAN's network and subnets. */
export interface RouteServerRow {
  id: string;
  asn: number | string;
  ip_v4: string | null;
  ip_v6: string | null;
  network_service: string;
  metro_area_network: string | null;
  subnet_v4: string | null;
  subnet_v6: string | null;
}

/** The catalogue's rows a fabric is built from. */
export interface FabricCatalogue {
  /** Every port of the catalogue's devices (or of those named), in device and port order. */
  ports(only?: readonly string[]): Promise<FabricPortRow[]>;
  /** Every route server of the catalogue, in id order. */
  routeServers(): Promise<RouteServerRow[]>;
  /** The route server that is network feature `id`, if there is one. */
  routeServer(id: string): Promise<RouteServerRow | undefined>;
}
