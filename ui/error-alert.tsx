// An error sentence announced to assistive technology, or nothing.

export function ErrorAlert(props: { readonly error: string | undefined }) {
  return props.error === undefined ? null : (
    <p class="error" role="alert">
      {props.error}
    </p>
  );
}
