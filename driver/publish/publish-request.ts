// The requests a publish passes around, after driver/csi/requests.ts has validated them,
// and the volume attributes kubelet sets that they are read from.

/** volume_context keys kubelet sets when the CSIDriver has podInfoOnMount: true. */
export const POD_NAME_KEY = 'csi.storage.k8s.io/pod.name';
export const POD_NAMESPACE_KEY = 'csi.storage.k8s.io/pod.namespace';
export const POD_UID_KEY = 'csi.storage.k8s.io/pod.uid';
export const SERVICE_ACCOUNT_NAME_KEY = 'csi.storage.k8s.io/serviceAccount.name';
export const EPHEMERAL_KEY = 'csi.storage.k8s.io/ephemeral';
/** The one volume attribute a pod must set. */
export const SECRET_PROVIDER_CLASS_KEY = 'secretProviderClass';

/** The pod a volume belongs to. */
export interface PodRef {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly serviceAccountName: string;
}

/** A NodePublishVolume request after validation; `targetPath` is canonical (driver/mount/target-path.ts). */
export interface PublishRequest {
  readonly volumeId: string;
  readonly targetPath: string;
  readonly spcName: string;
  readonly pod: PodRef;
  readonly volumeContext: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  /**
   * The group the volume is written for: kubelet's volume_mount_group, the pod's
   * securityContext.fsGroup (we advertise VOLUME_MOUNT_GROUP). Undefined when none was sent.
   */
  readonly mountGroup?: number;
}

/** A NodeUnpublishVolume request after validation; `targetPath` is canonical, as on publish. */
export interface UnpublishRequest {
  readonly volumeId: string;
  readonly targetPath: string;
}
