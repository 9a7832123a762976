import { declaredFamily } from '../declared-family';
import { MAC_FAMILY } from '../../domain/macs';

/** MAC address registrations, as their family declares them (domain/macs.ts). */
export const macsFamily = declaredFamily(MAC_FAMILY);
