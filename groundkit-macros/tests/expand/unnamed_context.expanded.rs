/// Echo the text back.
pub async fn echo(_: &Ctx, request: EchoRequest) -> Result<Echo, Error> {
    Ok(Echo { text: request.text })
}
#[doc(hidden)]
#[::groundkit_core::__private::linkme::distributed_slice(
    ::groundkit_core::__private::TOOLS
)]
#[linkme(crate = ::groundkit_core::__private::linkme)]
static __GROUNDKIT_TOOL_ECHO: ::groundkit_core::__private::ToolSpec = {
    #[allow(dead_code, clippy::needless_borrow)]
    fn __groundkit_checks(request: &EchoRequest) {
        ::groundkit_core::__private::assert_context::<Ctx>();
        ::groundkit_core::__private::assert_request::<EchoRequest>();
        ::groundkit_core::__private::assert_return::<Result<Echo, Error>>();
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        arguments: ::groundkit_core::__private::serde_json::Value,
        call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::serde_json::Value,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            let request = ::groundkit_core::__private::parse_arguments::<
                EchoRequest,
            >(arguments)?;
            let response = ::groundkit_core::__private::ToolReturn::into_result(
                echo(context, request).await,
            )?;
            ::groundkit_core::__private::to_output(&response)
        })
    }
    ::groundkit_core::__private::ToolSpec::new::<
        ::groundkit_core::__private::ReadOnly,
    >(::groundkit_core::__private::ToolParts {
        name: "echo",
        title: ::groundkit_core::__private::core::option::Option::None,
        icon: ::groundkit_core::__private::core::option::Option::None,
        summary: "Echo the text back.",
        description: "Echo the text back.",
        route: ::groundkit_core::__private::RestRoute {
            method: ::groundkit_core::__private::HttpMethod::Post,
            path: "/echo",
            params: &[],
        },
        context: ::groundkit_core::__private::type_id::<Ctx>,
        context_name: ::groundkit_core::__private::core::any::type_name::<Ctx>,
        input_schema: ::groundkit_core::__private::input_schema::<EchoRequest>,
        output_schema: ::groundkit_core::__private::output_schema::<
            <Result<Echo, Error> as ::groundkit_core::__private::ToolReturn>::Response,
        >,
        handler: __groundkit_handler,
    })
};
