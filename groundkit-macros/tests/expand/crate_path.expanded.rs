/// Count the words of a text.
pub async fn text_stats(ctx: &Ctx, request: StatsRequest) -> Result<Stats, Error> {
    ctx.stats(&request.text)
}
#[doc(hidden)]
#[::my_framework::gk::__private::linkme::distributed_slice(
    ::my_framework::gk::__private::TOOLS
)]
#[linkme(crate = ::my_framework::gk::__private::linkme)]
static __GROUNDKIT_TOOL_TEXT_STATS: ::my_framework::gk::__private::ToolSpec = {
    #[allow(dead_code, clippy::needless_borrow)]
    fn __groundkit_checks(request: &StatsRequest) {
        ::my_framework::gk::__private::assert_context::<Ctx>();
        ::my_framework::gk::__private::assert_request::<StatsRequest>();
        ::my_framework::gk::__private::assert_return::<Result<Stats, Error>>();
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::my_framework::gk::__private::ErasedContext,
        arguments: ::my_framework::gk::__private::serde_json::Value,
        call: ::my_framework::gk::__private::RequestContext,
    ) -> ::my_framework::gk::__private::BoxFuture<
        'a,
        ::my_framework::gk::__private::core::result::Result<
            ::my_framework::gk::__private::serde_json::Value,
            ::my_framework::gk::__private::Error,
        >,
    > {
        ::my_framework::gk::__private::std::boxed::Box::pin(async move {
            let context = ::my_framework::gk::__private::downcast_context::<
                Ctx,
            >(context)?;
            let request = ::my_framework::gk::__private::parse_arguments::<
                StatsRequest,
            >(arguments)?;
            let response = ::my_framework::gk::__private::ToolReturn::into_result(
                text_stats(context, request).await,
            )?;
            ::my_framework::gk::__private::to_output(&response)
        })
    }
    ::my_framework::gk::__private::ToolSpec::new::<
        ::my_framework::gk::__private::ReadOnly,
    >(::my_framework::gk::__private::ToolParts {
        name: "text_stats",
        title: ::my_framework::gk::__private::core::option::Option::None,
        icon: ::my_framework::gk::__private::core::option::Option::None,
        summary: "Count the words of a text.",
        description: "Count the words of a text.",
        route: ::my_framework::gk::__private::RestRoute {
            method: ::my_framework::gk::__private::HttpMethod::Post,
            path: "/text/stats",
            params: &[],
        },
        context: ::my_framework::gk::__private::type_id::<Ctx>,
        context_name: ::my_framework::gk::__private::core::any::type_name::<Ctx>,
        input_schema: ::my_framework::gk::__private::input_schema::<StatsRequest>,
        output_schema: ::my_framework::gk::__private::output_schema::<
            <Result<Stats, Error> as ::my_framework::gk::__private::ToolReturn>::Response,
        >,
        handler: __groundkit_handler,
    })
};
