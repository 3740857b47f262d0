// Small inline icons (24×24, stroke = currentColor). They are decoration:
// every button that shows one has an aria-label.
const Icon = ({ children }) => (
  <svg viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor" strokeWidth="2"
    strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
    {children}
  </svg>
);

export const CopyIcon = () => (
  <Icon><rect x="9" y="9" width="13" height="13" rx="2" /><path d="M5 15H4a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v1" /></Icon>
);
export const CheckIcon = () => <Icon><path d="M20 6 9 17l-5-5" /></Icon>;
export const PencilIcon = () => (
  <Icon><path d="M17 3a2.85 2.85 0 1 1 4 4L7.5 20.5 2 22l1.5-5.5Z" /></Icon>
);
export const RefreshIcon = () => (
  <Icon><path d="M21 12a9 9 0 1 1-3-6.7L21 8" /><path d="M21 3v5h-5" /></Icon>
);
export const ArrowDownIcon = () => <Icon><path d="M12 5v14" /><path d="m19 12-7 7-7-7" /></Icon>;
export const ArrowUpIcon = () => <Icon><path d="m5 12 7-7 7 7" /><path d="M12 19V5" /></Icon>;
export const StopIcon = () => (
  <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
    <rect x="6" y="6" width="12" height="12" rx="2" fill="currentColor" />
  </svg>
);
export const ChevronLeftIcon = () => <Icon><path d="m15 18-6-6 6-6" /></Icon>;
export const ChevronRightIcon = () => <Icon><path d="m9 18 6-6-6-6" /></Icon>;
export const PanelIcon = () => (
  <Icon><rect x="3" y="3" width="18" height="18" rx="2" /><path d="M15 3v18" /></Icon>
);
export const CloseIcon = () => <Icon><path d="M18 6 6 18" /><path d="m6 6 12 12" /></Icon>;
export const PlusIcon = () => <Icon><path d="M12 5v14" /><path d="M5 12h14" /></Icon>;
export const TrashIcon = () => (
  <Icon><path d="M3 6h18" /><path d="M8 6V4h8v2" /><path d="M19 6l-1 14H6L5 6" /></Icon>
);
export const MenuIcon = () => <Icon><path d="M4 6h16" /><path d="M4 12h16" /><path d="M4 18h16" /></Icon>;
export const DownloadIcon = () => (
  <Icon><path d="M12 3v12" /><path d="m7 10 5 5 5-5" /><path d="M5 21h14" /></Icon>
);
