/*
 * btrfsConst.ts - block geometry as the engine models it (engine/src/kernel/
 * btree.h): a 16 KiB block, a leaf's data area, key pointers per node.
 */
export const BT_NODESIZE = 16384;
export const BT_LEAF_DATA = 16384 - 101;
export const BT_NODE_PTRS = Math.floor((16384 - 101) / 33);
